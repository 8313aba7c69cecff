import type { FastifyInstance } from 'fastify';
import type { TokenVerifier } from '../../identity';
import type { RawQuery } from '../application/runner-queries';
import type { UpdateManagedRunnerHandler } from '../application/update-managed-runner.handler';
import { answerBeforeNest } from './fast-path';
import { updateCommand } from './managed-runners.controller';

/** The route `ManagedRunnersController.update` serves, as Fastify names it. */
export const UPDATE_ROUTE = '/v1/sandbox/managedRunners/:id';

/**
 * Answers `PATCH /v1/sandbox/managedRunners/{id}` before Nest's pipeline (`answerBeforeNest`):
 * the policy PATCH is CPU-bound in this process. It does what `ManagedRunnersController.update`
 * does: SANDBOX_ADMIN as the controller requires, the same command (`updateCommand`) run by the
 * same handler, the same 200 body.
 */
export function registerUpdateFastPath(fastify: FastifyInstance, verifier: TokenVerifier, handler: UpdateManagedRunnerHandler): void {
  answerBeforeNest(fastify, { method: 'PATCH', url: UPDATE_ROUTE, role: 'SANDBOX_ADMIN' }, verifier, (caller, req) => {
    const { id } = req.params as { id: string };
    return handler.execute(updateCommand(caller, id, req.body, req.query as RawQuery));
  });
}

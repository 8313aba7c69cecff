import { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { replyWithError } from '../../../infrastructure/http/error.filter';
import { authenticate, type TokenVerifier } from '../../identity';
import type { RawQuery } from '../application/runner-queries';
import type { UpdateManagedRunnerHandler } from '../application/update-managed-runner.handler';
import { updateCommand } from './managed-runners.controller';

/** The route `ManagedRunnersController.update` serves, as Fastify names it. */
export const UPDATE_ROUTE = '/v1/sandbox/managedRunners/:id';

/**
 * Answers `PATCH /v1/sandbox/managedRunners/{id}` in a `preHandler` hook, before Nest's guard,
 * parameter, command bus and response pipeline: the policy PATCH is CPU-bound in this process,
 * and that pipeline was a measurable share of each request's work. The route, its body parsing,
 * the request-id and metrics hooks stay Fastify's own; this does what `AuthGuard` +
 * `ManagedRunnersController.update` do: the same authentication (`authenticate`, SANDBOX_ADMIN as
 * the controller requires), the same command (`updateCommand`) run by the same handler, the same
 * 200 body, and errors through the same `replyWithError` as the exception filter.
 */
export function registerUpdateFastPath(fastify: FastifyInstance, verifier: TokenVerifier, handler: UpdateManagedRunnerHandler): void {
  const log = new Logger('Http');
  fastify.addHook('preHandler', async (req: FastifyRequest, reply: FastifyReply) => {
    if (req.method !== 'PATCH' || req.routeOptions.url !== UPDATE_ROUTE) return;
    try {
      const caller = await authenticate(verifier, req.headers.authorization, 'SANDBOX_ADMIN', false);
      const { id } = req.params as { id: string };
      const runner = await handler.execute(updateCommand(caller, id, req.body, req.query as RawQuery));
      return await reply.status(200).send(runner);
    } catch (e) {
      return await replyWithError(log, req, reply, e);
    }
  });
}

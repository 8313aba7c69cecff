import type { FastifyInstance } from 'fastify';
import type { TokenVerifier } from '../../identity';
import type { RunnerQueries } from '../application/runner-queries';
import { answerBeforeNest } from './fast-path';

/** The route `ManagedRunnersController.get` serves, as Fastify names it. */
export const GET_ROUTE = '/v1/sandbox/managedRunners/:id';

/**
 * Answers `GET /v1/sandbox/managedRunners/{id}` before Nest's pipeline (`answerBeforeNest`): the
 * read is one indexed query, and the guard, parameter and response pipeline around it cost more
 * than the query. It does what `ManagedRunnersController.get` does: SANDBOX_ADMIN as the
 * controller requires, the same `RunnerQueries.get`, the same 200 body.
 */
export function registerGetFastPath(fastify: FastifyInstance, verifier: TokenVerifier, queries: RunnerQueries): void {
  answerBeforeNest(fastify, { method: 'GET', url: GET_ROUTE, role: 'SANDBOX_ADMIN' }, verifier, (caller, req) => {
    const { id } = req.params as { id: string };
    return queries.get(caller.organizationId, id);
  });
}

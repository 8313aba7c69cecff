import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TokenAuthenticator } from '../auth/token-authenticator';
import type { SandboxLifecycleService } from '../sandboxes/sandbox-lifecycle.service';
import type { SnapshotsService } from '../snapshots/snapshots.service';
import { replyWithError } from './error.filter';
import { CREATE_ROUTE, createSandbox } from './sandboxes.controller';

/**
 * Answers `POST /v1/sandboxes` in a `preHandler` hook, before Nest's guard, parameter and
 * response pipeline: on a warm pool's create (answered RUNNING, a few milliseconds in all) that
 * pipeline is a measurable share of the gateway's own work. The route, its body parsing, the
 * metrics hook and the error handler stay Fastify's and Nest's own; this does what `AuthGuard` +
 * `SandboxesController.create` do: the same authentication, the same implementation
 * (`createSandbox`, which the controller calls too), the same 200 body, errors through the same
 * `replyWithError` as the exception filter.
 */
export function registerCreateFastPath(
  fastify: FastifyInstance,
  auth: TokenAuthenticator,
  lifecycle: SandboxLifecycleService,
  snapshots: SnapshotsService,
): void {
  fastify.addHook('preHandler', async (req: FastifyRequest, reply: FastifyReply) => {
    if (req.method !== 'POST' || req.routeOptions.url !== CREATE_ROUTE) return;
    try {
      const principal = await auth.authenticateRequest(req);
      // As Nest's `@Query('requestId')` hands it to the controller.
      const requestId = (req.query as Record<string, string | undefined>).requestId;
      const view = await createSandbox(lifecycle, snapshots, principal, req.body, requestId);
      return await reply.status(200).send(view);
    } catch (e) {
      return await replyWithError(reply, e);
    }
  });
}

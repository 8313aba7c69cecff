import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TokenAuthenticator } from '../auth/token-authenticator';
import type { SandboxOpsService } from '../sandboxes/sandbox-ops.service';
import { replyWithError } from './error.filter';
import { SANDBOX_VERB_ROUTE, splitVerb, unaryExec } from './sandboxes.controller';

/**
 * Answers `POST /v1/sandboxes/{id}:exec` in a `preHandler` hook, before Nest's guard, parameter
 * and response pipeline, which cost as much as everything else the gateway does on a unary exec
 * round trip. The route, its body parsing, the metrics hook and the error handler stay Fastify's
 * and Nest's own; this does what `AuthGuard` + `SandboxesController.postVerb` do for the verb:
 * the same authentication, the same verb implementation (`unaryExec`, which the controller calls
 * too), the same 200 body, errors through the same `replyWithError` as the exception filter.
 */
export function registerUnaryExecFastPath(fastify: FastifyInstance, auth: TokenAuthenticator, ops: SandboxOpsService): void {
  fastify.addHook('preHandler', async (req: FastifyRequest, reply: FastifyReply) => {
    if (req.method !== 'POST' || req.routeOptions.url !== SANDBOX_VERB_ROUTE) return;
    const idVerb = (req.params as { idVerb?: unknown }).idVerb;
    if (typeof idVerb !== 'string') return;
    const { id, verb } = splitVerb(idVerb);
    if (verb !== 'exec') return;
    try {
      const principal = await auth.authenticateRequest(req);
      const out = await unaryExec(ops, principal, id, req.body);
      return await reply.status(200).send(out);
    } catch (e) {
      return await replyWithError(reply, e);
    }
  });
}

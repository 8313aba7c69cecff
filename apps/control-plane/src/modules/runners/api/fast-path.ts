import { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { replyWithError } from '../../../infrastructure/http/error.filter';
import { authenticate, type AuthenticatedCaller, type Role, type TokenVerifier } from '../../identity';

/**
 * Answers one route in a `preHandler` hook, before Nest's guard, parameter and response
 * pipeline, for the routes where that pipeline is a measurable share of each request's work.
 * The route, its body parsing, the request-id and metrics hooks stay Fastify's own; what the
 * guard and the exception filter do is done by the same functions: `authenticate` (with the role
 * the controller requires) and `replyWithError`, so a refusal reads the same whichever path
 * served it. `url` is the route as Fastify names it (`/v1/.../:id`).
 */
export function answerBeforeNest(
  fastify: FastifyInstance,
  route: { method: string; url: string; role: Role },
  verifier: TokenVerifier,
  answer: (caller: AuthenticatedCaller, req: FastifyRequest) => Promise<unknown>,
): void {
  const log = new Logger('Http');
  const respond = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    try {
      const caller = await authenticate(verifier, req.headers.authorization, route.role, false);
      const body = await answer(caller, req);
      void reply.status(200).send(body);
    } catch (e) {
      void replyWithError(log, req, reply, e);
    }
  };
  // Callback style: every other request passes with no promise made for it.
  fastify.addHook('preHandler', (req, reply, done) => {
    if (req.method !== route.method || req.routeOptions.url !== route.url) {
      done();
      return;
    }
    void respond(req, reply);
  });
}

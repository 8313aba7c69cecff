import { Catch, type ArgumentsHost, type ExceptionFilter, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PaddockError } from '@paddock/contracts';
import { httpErrorToPaddock } from '@paddock/kit';

/**
 * Renders every error in the Connect JSON shape `{ code, message, details }`, through the kit's
 * one mapping of framework errors (`req` names the route and the method in a 404).
 */
export function toPaddockError(e: unknown, req?: FastifyRequest): PaddockError {
  return httpErrorToPaddock(e, {
    ...(req ? { method: req.method, url: req.url, bodyLimitBytes: req.routeOptions.bodyLimit } : {}),
    mediaTypes: ['application/json', 'application/octet-stream'],
  });
}

const log = new Logger('Gateway');

/** Sends `e` as the error response (internal errors are logged with their stack first). */
export function replyWithError(reply: FastifyReply, e: unknown): FastifyReply {
  const err = toPaddockError(e, reply.request);
  if (err.code === 'internal') log.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
  return reply.status(err.httpStatus).header('content-type', 'application/json').send(err.toBody());
}

@Catch()
export class PaddockErrorFilter implements ExceptionFilter {
  catch(e: unknown, host: ArgumentsHost): void {
    void replyWithError(host.switchToHttp().getResponse<FastifyReply>(), e);
  }
}

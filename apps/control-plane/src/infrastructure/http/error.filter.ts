import { Catch, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { PaddockError } from '@paddock/contracts';
import { ExpectedVersionConflictError, IdempotencyConflictError } from '@paddock/event-store';
import { httpErrorToPaddock } from '@paddock/kit';
import type { FastifyReply, FastifyRequest } from 'fastify';

export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * Renders every error as the Connect body `{code, message, details}`: the event store's
 * conflicts in the model's words, everything else through the kit's one mapping (framework
 * errors named, anything unexpected `internal` with no stack or driver text in the response).
 */
export function toPaddockError(err: unknown, req?: FastifyRequest): PaddockError {
  if (err instanceof ExpectedVersionConflictError) {
    return new PaddockError('aborted', 'the resource was modified concurrently; reload it and retry');
  }
  if (err instanceof IdempotencyConflictError) {
    return new PaddockError('already_exists', 'this request id was already used with a different request');
  }
  return httpErrorToPaddock(err, { ...(req ? { method: req.method, url: req.url } : {}), bodyLimitBytes: BODY_LIMIT_BYTES });
}

/**
 * Answers `err` on `reply`. The exception filter and the routes answered before Nest's pipeline
 * (the fast paths) both reply through this, so an error reads the same whichever path served it.
 */
export function replyWithError(log: Logger, req: FastifyRequest, reply: FastifyReply, err: unknown): FastifyReply {
  const e = toPaddockError(err, req);
  if (e.code === 'internal' && !(err instanceof PaddockError)) {
    const detail = err instanceof Error ? (err.stack ?? err.message) : String(err);
    log.error(`request ${req.id} ${req.method} ${req.url} failed: ${detail}`);
  }
  if (e.code === 'unauthenticated') void reply.header('www-authenticate', 'Bearer realm="paddock"');
  return reply.status(e.httpStatus).header('content-type', 'application/json; charset=utf-8').send(e.toBody());
}

@Catch()
export class PaddockErrorFilter implements ExceptionFilter {
  private readonly log = new Logger('Http');

  catch(err: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw err;
    const http = host.switchToHttp();
    void replyWithError(this.log, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>(), err);
  }
}

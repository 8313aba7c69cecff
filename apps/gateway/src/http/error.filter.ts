import { Catch, HttpException, type ArgumentsHost, type ExceptionFilter, Logger } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { PaddockError, type ErrorCode } from '@paddock/contracts';

const BY_STATUS: Record<number, ErrorCode> = {
  400: 'invalid_argument',
  401: 'unauthenticated',
  403: 'permission_denied',
  404: 'not_found',
  405: 'unimplemented',
  409: 'already_exists',
  413: 'resource_exhausted',
  415: 'invalid_argument',
  429: 'resource_exhausted',
  501: 'unimplemented',
  503: 'unavailable',
};

/** Renders every error in the Connect JSON shape `{ code, message, details }`. */
export function toPaddockError(e: unknown): PaddockError {
  if (e instanceof PaddockError) return e;
  if (e instanceof HttpException) {
    const status = e.getStatus();
    return new PaddockError(BY_STATUS[status] ?? (status >= 500 ? 'internal' : 'invalid_argument'), e.message);
  }
  const statusCode = (e as { statusCode?: unknown }).statusCode;
  if (typeof statusCode === 'number' && statusCode < 500) {
    return new PaddockError(BY_STATUS[statusCode] ?? 'invalid_argument', (e as Error).message ?? 'bad request');
  }
  return new PaddockError('internal', 'internal error');
}

const log = new Logger('Gateway');

/** Sends `e` as the error response (internal errors are logged with their stack first). */
export function replyWithError(reply: FastifyReply, e: unknown): FastifyReply {
  const err = toPaddockError(e);
  if (err.code === 'internal') log.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
  return reply.status(err.httpStatus).header('content-type', 'application/json').send(err.toBody());
}

@Catch()
export class PaddockErrorFilter implements ExceptionFilter {
  catch(e: unknown, host: ArgumentsHost): void {
    void replyWithError(host.switchToHttp().getResponse<FastifyReply>(), e);
  }
}

import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { PaddockError, type ErrorCode } from '@paddock/contracts';
import { ExpectedVersionConflictError, IdempotencyConflictError } from '@paddock/event-store';
import type { FastifyReply, FastifyRequest } from 'fastify';

export const BODY_LIMIT_BYTES = 1024 * 1024;

const STATUS_TO_CODE: Record<number, ErrorCode> = {
  400: 'invalid_argument',
  401: 'unauthenticated',
  403: 'permission_denied',
  404: 'not_found',
  405: 'not_found',
  409: 'aborted',
  413: 'invalid_argument',
  415: 'invalid_argument',
  429: 'resource_exhausted',
  501: 'unimplemented',
  503: 'unavailable',
  504: 'deadline_exceeded',
};

/**
 * Renders every error as the Connect body `{code, message, details}`. Framework errors (bad
 * JSON, oversized body, unknown route) are translated into words that name the problem;
 * anything unexpected becomes `internal` with no stack or driver text in the response.
 */
export function toPaddockError(err: unknown, req?: FastifyRequest): PaddockError {
  if (err instanceof PaddockError) return err;
  if (err instanceof ExpectedVersionConflictError) {
    return new PaddockError('aborted', 'the resource was modified concurrently; reload it and retry');
  }
  if (err instanceof IdempotencyConflictError) {
    return new PaddockError('already_exists', 'this request id was already used with a different request');
  }
  const status = statusOf(err);
  if (status === 404 && err instanceof HttpException) {
    const what = req ? `${req.method} ${req.url.split('?')[0] ?? ''}` : 'this route';
    return new PaddockError('not_found', `no such route: ${what}`);
  }
  if (status === 413) {
    return new PaddockError('invalid_argument', `request body exceeds the ${BODY_LIMIT_BYTES} byte (1 MiB) limit`, {
      violations: [{ field: '(body)', rule: 'max_size', description: 'request body must be at most 1 MiB', limit: BODY_LIMIT_BYTES }],
    });
  }
  if (status === 415) {
    return new PaddockError('invalid_argument', 'unsupported Content-Type; send application/json', {
      violations: [{ field: 'Content-Type', rule: 'media_type', description: 'request bodies must be application/json' }],
    });
  }
  if (err instanceof SyntaxError || (status === 400 && /JSON/i.test(messageOf(err)))) {
    return new PaddockError('invalid_argument', `request body is not valid JSON: ${messageOf(err)}`, {
      violations: [{ field: '(body)', rule: 'json', description: messageOf(err) }],
    });
  }
  if (status !== undefined && status >= 400 && status < 500) {
    return new PaddockError(STATUS_TO_CODE[status] ?? 'invalid_argument', messageOf(err) || 'bad request');
  }
  if (status !== undefined && STATUS_TO_CODE[status]) {
    return new PaddockError(STATUS_TO_CODE[status], messageOf(err));
  }
  return new PaddockError('internal', 'internal error; retry later or report the request id');
}

function statusOf(err: unknown): number | undefined {
  if (err instanceof HttpException) return err.getStatus();
  const s = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof s === 'number' ? s : undefined;
}

function messageOf(err: unknown): string {
  if (err instanceof HttpException) {
    const r = err.getResponse();
    if (typeof r === 'string') return r;
    const m = (r as { message?: unknown }).message;
    return Array.isArray(m) ? m.join('; ') : typeof m === 'string' ? m : err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

@Catch()
export class PaddockErrorFilter implements ExceptionFilter {
  private readonly log = new Logger('Http');

  catch(err: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw err;
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const req = http.getRequest<FastifyRequest>();
    const e = toPaddockError(err, req);
    if (e.code === 'internal' && !(err instanceof PaddockError)) {
      const detail = err instanceof Error ? (err.stack ?? err.message) : String(err);
      this.log.error(`request ${req.id} ${req.method} ${req.url} failed: ${detail}`);
    }
    if (e.code === 'unauthenticated') void reply.header('www-authenticate', 'Bearer realm="paddock"');
    void reply.status(e.httpStatus).header('content-type', 'application/json; charset=utf-8').send(e.toBody());
  }
}

import { PaddockError, type ErrorCode } from '@paddock/contracts';

/**
 * The error code of an HTTP status a framework (Nest, Fastify) raised, in the product's error
 * model: conflicts are `already_exists` (the model's code for a create that collides; a stale
 * write is its own `aborted` or `failed_precondition`, raised by the domain, never by a status),
 * an oversized body is a bad request (`invalid_argument`: retrying cannot help, and
 * `resource_exhausted` would answer 429, which clients retry), and a method the route does not
 * serve is `unimplemented`.
 */
export const FRAMEWORK_STATUS_CODES: Readonly<Record<number, ErrorCode>> = {
  400: 'invalid_argument',
  401: 'unauthenticated',
  403: 'permission_denied',
  404: 'not_found',
  405: 'unimplemented',
  409: 'already_exists',
  413: 'invalid_argument',
  415: 'invalid_argument',
  429: 'resource_exhausted',
  501: 'unimplemented',
  503: 'unavailable',
  504: 'deadline_exceeded',
};

/** What the failing request was, for messages that name it. */
export interface HttpErrorContext {
  method?: string;
  url?: string;
  /** The app's body limit, named when a body exceeds it. */
  bodyLimitBytes?: number;
  /** The request media types the app accepts, named when another is sent. */
  mediaTypes?: readonly string[];
}

/** A Nest HttpException, recognised by shape so that this kit needs no Nest. */
interface StatusException {
  getStatus(): number;
  getResponse(): unknown;
  message: string;
}
const isStatusException = (e: unknown): e is StatusException =>
  typeof e === 'object' && e !== null && typeof (e as { getStatus?: unknown }).getStatus === 'function' && typeof (e as { getResponse?: unknown }).getResponse === 'function';

function statusOf(err: unknown): number | undefined {
  if (isStatusException(err)) return err.getStatus();
  const s = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof s === 'number' ? s : undefined;
}

function messageOf(err: unknown): string {
  if (isStatusException(err)) {
    const r = err.getResponse();
    if (typeof r === 'string') return r;
    const m = (r as { message?: unknown } | null)?.message;
    return Array.isArray(m) ? m.join('; ') : typeof m === 'string' ? m : err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

const mib = (bytes: number): string => `${Math.round((bytes / 1024 ** 2) * 100) / 100} MiB`;

/**
 * Any error an HTTP handler let escape, as the error model: a PaddockError as it is; a
 * framework's error (unknown route, oversized or unreadable body, a status exception) in words
 * that name the problem and the field; anything else `internal`, with no stack or driver text.
 */
export function httpErrorToPaddock(err: unknown, ctx: HttpErrorContext = {}): PaddockError {
  if (err instanceof PaddockError) return err;
  const status = statusOf(err);
  if (status === 404 && isStatusException(err) && ctx.method && ctx.url !== undefined) {
    return new PaddockError('not_found', `no such route: ${ctx.method} ${ctx.url.split('?')[0] ?? ''}`);
  }
  if (status === 413) {
    const limit = ctx.bodyLimitBytes;
    const size = limit === undefined ? 'the size limit' : `the ${limit} byte (${mib(limit)}) limit`;
    return new PaddockError('invalid_argument', `request body exceeds ${size}`, {
      violations: [{ field: '(body)', rule: 'max_size', description: `request body must be at most ${limit === undefined ? 'the limit' : mib(limit)}`, ...(limit === undefined ? {} : { limit }) }],
    });
  }
  if (status === 415) {
    const types = ctx.mediaTypes ?? ['application/json'];
    return new PaddockError('invalid_argument', `unsupported Content-Type; send ${types.join(' or ')}`, {
      violations: [{ field: 'Content-Type', rule: 'media_type', description: `request bodies must be ${types.join(' or ')}` }],
    });
  }
  if (err instanceof SyntaxError || (status === 400 && /JSON/i.test(messageOf(err)))) {
    return new PaddockError('invalid_argument', `request body is not valid JSON: ${messageOf(err)}`, {
      violations: [{ field: '(body)', rule: 'json', description: messageOf(err) }],
    });
  }
  if (status !== undefined && status >= 400 && status < 500) {
    return new PaddockError(FRAMEWORK_STATUS_CODES[status] ?? 'invalid_argument', messageOf(err) || 'bad request');
  }
  const code = status === undefined ? undefined : FRAMEWORK_STATUS_CODES[status];
  if (code) return new PaddockError(code, messageOf(err));
  return new PaddockError('internal', 'internal error; retry later or report the request id');
}

import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { PADDOCK_ERROR_DOMAIN, type ErrorCode, type PaddockError } from '@paddock/contracts';
import { BadRequestSchema, ErrorInfoSchema, RetryInfoSchema } from '@paddock/proto';
// The one place the gRPC surface learns Paddock's error model: REST's own renderer decides what
// an arbitrary exception is, so both transports agree on code, message and reason.
import { toPaddockError } from '../http/error.filter';

const CODE_OF: Record<ErrorCode, Code> = {
  invalid_argument: Code.InvalidArgument,
  failed_precondition: Code.FailedPrecondition,
  not_found: Code.NotFound,
  already_exists: Code.AlreadyExists,
  aborted: Code.Aborted,
  permission_denied: Code.PermissionDenied,
  unauthenticated: Code.Unauthenticated,
  resource_exhausted: Code.ResourceExhausted,
  unavailable: Code.Unavailable,
  unimplemented: Code.Unimplemented,
  deadline_exceeded: Code.DeadlineExceeded,
  internal: Code.Internal,
};

/**
 * Codes a client may retry as is: the condition is transient (a runner is away or full, a race
 * lost). RetryInfo tells the SDKs so; their retry loops back off from this delay.
 */
const RETRYABLE = new Set<ErrorCode>(['unavailable', 'resource_exhausted', 'aborted']);
const RETRY_DELAY_SECONDS = 1n;

/** The reason a not-yet-built method (or field) answers with, the product's own spelling. */
export const NOT_IMPLEMENTED_REASON = 'CWSANDBOX_NOT_IMPLEMENTED';

/**
 * Renders a Paddock error as the `google.rpc.Status` a gRPC or Connect client reads: the same
 * code and message as the REST body, `ErrorInfo` (reason, domain, metadata) when there is a
 * reason, `BadRequest` for field violations, `RetryInfo` for the retryable codes.
 */
export function toConnectError(e: unknown): ConnectError {
  if (e instanceof ConnectError) return e;
  const err: PaddockError = toPaddockError(e);
  return statusError(CODE_OF[err.code], err.message, err.reason, err.metadata, err.violations, RETRYABLE.has(err.code));
}

/** UNIMPLEMENTED with reason CWSANDBOX_NOT_IMPLEMENTED, naming what is missing. */
export function notImplemented(what: string): ConnectError {
  return statusError(Code.Unimplemented, `${what} is not implemented by Paddock yet`, NOT_IMPLEMENTED_REASON, {}, [], false);
}

function statusError(
  code: Code,
  message: string,
  reason: string | undefined,
  metadata: Record<string, string>,
  violations: readonly { field: string; description: string }[],
  retryable: boolean,
): ConnectError {
  const details = [];
  if (reason) details.push({ desc: ErrorInfoSchema, value: create(ErrorInfoSchema, { reason, domain: PADDOCK_ERROR_DOMAIN, metadata }) });
  if (violations.length) {
    details.push({ desc: BadRequestSchema, value: create(BadRequestSchema, { fieldViolations: violations.map((v) => ({ field: v.field, description: v.description })) }) });
  }
  if (retryable) details.push({ desc: RetryInfoSchema, value: create(RetryInfoSchema, { retryDelay: { seconds: RETRY_DELAY_SECONDS } }) });
  return new ConnectError(message, code, undefined, details);
}

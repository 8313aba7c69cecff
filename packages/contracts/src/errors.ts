import { z } from 'zod';

/**
 * The Connect/gRPC error model every Paddock surface speaks. The JSON body is
 * `{ code, message, details }`; HTTP status follows the code (see {@link httpStatusOf}).
 */
export const ERROR_CODES = [
  'invalid_argument',
  'failed_precondition',
  'not_found',
  'already_exists',
  'aborted',
  'permission_denied',
  'unauthenticated',
  'resource_exhausted',
  'unavailable',
  'unimplemented',
  'deadline_exceeded',
  'internal',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];
export const ErrorCodeSchema = z.enum(ERROR_CODES);

const HTTP_STATUS: Record<ErrorCode, number> = {
  invalid_argument: 400,
  failed_precondition: 400,
  not_found: 404,
  already_exists: 409,
  aborted: 409,
  permission_denied: 403,
  unauthenticated: 401,
  resource_exhausted: 429,
  unavailable: 503,
  unimplemented: 501,
  deadline_exceeded: 504,
  internal: 500,
};

/** HTTP status for a Connect code, e.g. `httpStatusOf('failed_precondition') === 400`. */
export function httpStatusOf(code: ErrorCode): number {
  return HTTP_STATUS[code];
}

/** Reason codes of the sandbox data plane (the reasons the product's clients map to their exception classes) plus Paddock's control-plane reasons. */
export const ERROR_REASONS = [
  'CWSANDBOX_INVALID_REQUEST',
  'CWSANDBOX_SANDBOX_NOT_FOUND',
  'CWSANDBOX_SANDBOX_NOT_RUNNING',
  'CWSANDBOX_SANDBOX_TERMINATED',
  /** DeleteSandboxLogs on a sandbox that has not ended. */
  'CWSANDBOX_SANDBOX_NOT_TERMINAL',
  /** The sandbox's logs were deleted (DeleteSandboxLogs). */
  'CWSANDBOX_LOGS_DELETED',
  'CWSANDBOX_FILE_NOT_FOUND',
  'CWSANDBOX_FILE_TOO_LARGE',
  'CWSANDBOX_COMMAND_TIMEOUT',
  'CWSANDBOX_NO_SUITABLE_RUNNER',
  'CWSANDBOX_RUNNER_UNAVAILABLE',
  'CWSANDBOX_RUNNER_AT_CAPACITY',
  /** A service URL whose sandbox is not running, or whose port nothing inside the sandbox accepts. */
  'CWSANDBOX_SERVICE_UNAVAILABLE',
  'CWSANDBOX_POLICY_VIOLATION',
  /** The caller's address is outside the runner policy's controlPlaneAccess.sourceIpAllowlist. */
  'PADDOCK_SOURCE_IP_NOT_ALLOWED',
  'CWSANDBOX_RESOURCE_CEILING_EXCEEDED',
  /** A spec's `secretStores`/`imagePullCredentials` name a store (or a secret in it) the organization does not have. */
  'CWSANDBOX_SECRET_STORE_NOT_PROVISIONED',
  'CWSANDBOX_PROFILE_MISMATCH',
  'CWSANDBOX_IMAGE_NOT_FOUND',
  'CWSANDBOX_INTERNAL',
  /** File-system snapshot reasons (the product's `CWSANDBOX_FSS_*` list, those Paddock raises). */
  'CWSANDBOX_FSS_NOT_FOUND',
  'CWSANDBOX_FSS_NOT_READY',
  'CWSANDBOX_FSS_NOT_SUPPORTED',
  'CWSANDBOX_FSS_SIZE_EXCEEDED',
  'CWSANDBOX_FSS_CREATE_FAILED',
  'CWSANDBOX_FSS_CREATE_TIMED_OUT',
  'CWSANDBOX_FSS_RESTORE_FAILED',
  'CWSANDBOX_VOLUME_NOT_SNAPSHOTTABLE',
  /** The runner's backend cannot do this (e.g. pause on Kubernetes); the violation names it. */
  'CWSANDBOX_NOT_IMPLEMENTED',
  'PADDOCK_VALIDATION_FAILED',
  'PADDOCK_ETAG_STALE',
  'PADDOCK_ETAG_REQUIRED',
  'PADDOCK_RUNNER_EXISTS_FOR_CLUSTER',
  'PADDOCK_RUNNER_ID_TAKEN',
  'PADDOCK_PRIVILEGED_TEMPLATE',
  'PADDOCK_IMMUTABLE_FIELD',
  'PADDOCK_OUTPUT_ONLY_FIELD',
  'PADDOCK_LEGACY_FIELD',
] as const;
export type ErrorReason = (typeof ERROR_REASONS)[number];

/** One violated rule on one field: `field` is a dotted path, `rule` names the rule broken. */
export const FieldViolationSchema = z.object({
  field: z.string(),
  rule: z.string(),
  description: z.string(),
  requested: z.unknown().optional(),
  limit: z.unknown().optional(),
  constraint: z.string().optional(),
});
export type FieldViolation = z.infer<typeof FieldViolationSchema>;

export const ErrorDetailSchema = z.union([
  z.object({
    '@type': z.literal('type.googleapis.com/google.rpc.ErrorInfo'),
    reason: z.string(),
    domain: z.string(),
    metadata: z.record(z.string(), z.string()).optional(),
  }),
  z.object({
    '@type': z.literal('type.googleapis.com/google.rpc.BadRequest'),
    fieldViolations: z.array(FieldViolationSchema),
  }),
  z.object({
    '@type': z.literal('type.googleapis.com/google.rpc.RetryInfo'),
    retryDelay: z.string(),
  }),
  z.object({ '@type': z.string() }).catchall(z.unknown()),
]);
export type ErrorDetail = z.infer<typeof ErrorDetailSchema>;

export const ApiErrorBodySchema = z.object({
  code: ErrorCodeSchema,
  message: z.string(),
  details: z.array(ErrorDetailSchema).default([]),
});
export type ApiErrorBody = z.infer<typeof ApiErrorBodySchema>;

export const PADDOCK_ERROR_DOMAIN = 'paddock.dev';

/**
 * A typed error any plane can throw and any edge can render. `reason` goes to an ErrorInfo
 * detail, `violations` to a BadRequest detail.
 */
export class PaddockError extends Error {
  readonly code: ErrorCode;
  readonly reason: ErrorReason | undefined;
  readonly violations: FieldViolation[];
  readonly metadata: Record<string, string>;
  constructor(
    code: ErrorCode,
    message: string,
    opts: { reason?: ErrorReason; violations?: FieldViolation[]; metadata?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'PaddockError';
    this.code = code;
    this.reason = opts.reason;
    this.violations = opts.violations ?? [];
    this.metadata = opts.metadata ?? {};
  }

  get httpStatus(): number {
    return httpStatusOf(this.code);
  }

  toBody(): ApiErrorBody {
    const details: ErrorDetail[] = [];
    if (this.reason) {
      details.push({
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: this.reason,
        domain: PADDOCK_ERROR_DOMAIN,
        ...(Object.keys(this.metadata).length ? { metadata: this.metadata } : {}),
      });
    }
    if (this.violations.length) {
      details.push({ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: this.violations });
    }
    return { code: this.code, message: this.message, details };
  }

  /** Rebuilds an error from a wire body (NATS replies, HTTP responses). */
  static fromBody(body: ApiErrorBody): PaddockError {
    let reason: ErrorReason | undefined;
    let violations: FieldViolation[] = [];
    let metadata: Record<string, string> = {};
    for (const d of body.details) {
      if (d['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo' && 'reason' in d) {
        reason = (ERROR_REASONS as readonly string[]).includes(String(d.reason)) ? (d.reason as ErrorReason) : undefined;
        metadata = (d as { metadata?: Record<string, string> }).metadata ?? {};
      }
      if (d['@type'] === 'type.googleapis.com/google.rpc.BadRequest' && 'fieldViolations' in d) {
        violations = d.fieldViolations as FieldViolation[];
      }
    }
    return new PaddockError(body.code, body.message, { reason, violations, metadata });
  }
}

export function isPaddockError(e: unknown): e is PaddockError {
  return e instanceof PaddockError;
}

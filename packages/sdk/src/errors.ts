/**
 * Typed errors of the SDK. Every error raised from a gateway answer carries the Connect `code`,
 * the `reason` code the platform sends (e.g. `CWSANDBOX_NO_SUITABLE_RUNNER`) and the field
 * violations, so callers can branch on them without parsing messages.
 */

export interface FieldViolation {
  field: string;
  rule: string;
  description: string;
  constraint?: string;
}

export interface ErrorBody {
  code: string;
  message: string;
  details?: { '@type'?: string; reason?: string; metadata?: Record<string, string>; fieldViolations?: FieldViolation[] }[];
}

/** Codes worth retrying with backoff (the request may succeed later unchanged). */
export const RETRYABLE_CODES: ReadonlySet<string> = new Set(['unavailable', 'resource_exhausted', 'deadline_exceeded']);

export class PaddockError extends Error {
  readonly code: string;
  readonly reason: string | undefined;
  readonly httpStatus: number | undefined;
  readonly violations: FieldViolation[];
  readonly metadata: Record<string, string>;

  constructor(
    code: string,
    message: string,
    opts: { reason?: string; httpStatus?: number; violations?: FieldViolation[]; metadata?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.reason = opts.reason;
    this.httpStatus = opts.httpStatus;
    this.violations = opts.violations ?? [];
    this.metadata = opts.metadata ?? {};
  }

  get retryable(): boolean {
    return RETRYABLE_CODES.has(this.code);
  }
}

export class AuthenticationError extends PaddockError {}
export class PermissionDeniedError extends PaddockError {}
export class ValidationError extends PaddockError {}
export class SandboxError extends PaddockError {}
export class SandboxNotFoundError extends SandboxError {}
export class SandboxNotRunningError extends SandboxError {}
export class SandboxUnavailableError extends SandboxNotRunningError {}
export class SandboxTerminatedError extends SandboxError {}
export class SandboxTimeoutError extends SandboxError {}
export class SandboxCommandTimeoutError extends SandboxTimeoutError {}
export class SandboxFileError extends SandboxError {}
export class SandboxResourceExhaustedError extends SandboxError {}
export class NoSuitableRunnerError extends SandboxError {}
export class RunnerUnavailableError extends SandboxError {}
/** The gateway's stream protocol was not followed (a bug on one side). */
export class SandboxProtocolError extends SandboxError {}

/** The sandbox reached FAILED (start failure, runner lost...) while the caller waited for it. */
export class SandboxFailedError extends SandboxError {
  constructor(
    readonly sandboxId: string,
    readonly stateReason: string | undefined,
    message: string,
  ) {
    super('failed_precondition', message, { reason: stateReason });
  }
}

/** `exec(..., { check: true })` saw a non-zero exit code. */
export class SandboxExecutionError extends SandboxError {
  constructor(
    readonly result: { exitCode: number; stdout: Buffer; stderr: Buffer; command: string[] },
  ) {
    super('failed_precondition', `command ${JSON.stringify(result.command)} exited with code ${result.exitCode}`);
  }
}

const BY_REASON: Record<string, new (code: string, message: string, opts: ConstructorParameters<typeof PaddockError>[2]) => PaddockError> = {
  CWSANDBOX_SANDBOX_NOT_FOUND: SandboxNotFoundError,
  CWSANDBOX_SANDBOX_NOT_RUNNING: SandboxNotRunningError,
  CWSANDBOX_SANDBOX_TERMINATED: SandboxTerminatedError,
  CWSANDBOX_NO_SUITABLE_RUNNER: NoSuitableRunnerError,
  CWSANDBOX_RUNNER_UNAVAILABLE: RunnerUnavailableError,
  CWSANDBOX_RUNNER_AT_CAPACITY: SandboxResourceExhaustedError,
  CWSANDBOX_COMMAND_TIMEOUT: SandboxCommandTimeoutError,
  CWSANDBOX_FILE_NOT_FOUND: SandboxFileError,
  CWSANDBOX_FILE_TOO_LARGE: SandboxFileError,
  CWSANDBOX_INVALID_REQUEST: ValidationError,
};

const BY_CODE: Record<string, typeof PaddockError> = {
  unauthenticated: AuthenticationError,
  permission_denied: PermissionDeniedError,
  invalid_argument: ValidationError,
  not_found: SandboxNotFoundError,
  resource_exhausted: SandboxResourceExhaustedError,
  unavailable: RunnerUnavailableError,
  deadline_exceeded: SandboxTimeoutError,
};

/** Builds the most specific error class for a gateway error body. */
export function errorFromBody(body: ErrorBody, httpStatus?: number): PaddockError {
  let reason: string | undefined;
  let violations: FieldViolation[] = [];
  let metadata: Record<string, string> = {};
  for (const d of body.details ?? []) {
    if (d.reason) {
      reason = d.reason;
      metadata = d.metadata ?? {};
    }
    if (d.fieldViolations) violations = d.fieldViolations;
  }
  const Cls = (reason && BY_REASON[reason]) || BY_CODE[body.code] || PaddockError;
  return new Cls(body.code, body.message, { reason, httpStatus, violations, metadata });
}

export function isErrorBody(v: unknown): v is ErrorBody {
  return typeof v === 'object' && v !== null && typeof (v as ErrorBody).code === 'string' && typeof (v as ErrorBody).message === 'string';
}

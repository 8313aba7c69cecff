import type { ErrorCode, FieldViolation } from '@paddock/contracts';

/**
 * One `details[]` entry of an error body. `ApiErrorBody` of @paddock/contracts types details as a
 * union keyed by '@type'; tests read them flattened: the fields a detail kind does not carry are absent.
 */
export interface ErrorDetailBody {
  '@type': string;
  /** google.rpc.ErrorInfo */
  reason?: string;
  domain?: string;
  metadata?: Record<string, string>;
  /** google.rpc.BadRequest */
  fieldViolations?: FieldViolation[];
  /** google.rpc.RetryInfo */
  retryDelay?: string;
}

/** The JSON body of every error response, as `api<ErrorBody>()` reads it. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  details: ErrorDetailBody[];
}

/** The field violations of the body's BadRequest detail; throws (failing the test) when it has none. */
export function fieldViolations(body: ErrorBody): FieldViolation[] {
  const badRequest = body.details.find((d) => d['@type'].endsWith('BadRequest'));
  if (!badRequest?.fieldViolations) throw new Error(`no BadRequest detail with fieldViolations in ${JSON.stringify(body)}`);
  return badRequest.fieldViolations;
}

/** The violation of `field` in the body's BadRequest detail; throws (failing the test) when there is none. */
export function fieldViolation(body: ErrorBody, field: string): FieldViolation {
  const violation = fieldViolations(body).find((v) => v.field === field);
  if (!violation) throw new Error(`no field violation for "${field}" in ${JSON.stringify(body)}`);
  return violation;
}

/**
 * Whether a parsed body is an error body (a string `code` and `message`): tells the two kinds of
 * a response that may be either (`api<ManagedRunner | ErrorBody>()`) apart.
 */
export function isErrorBody(body: unknown): body is ErrorBody {
  if (typeof body !== 'object' || body === null) return false;
  const { code, message } = body as { code?: unknown; message?: unknown };
  return typeof code === 'string' && typeof message === 'string';
}

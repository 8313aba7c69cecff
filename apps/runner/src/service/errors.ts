import { isPaddockError, PaddockError, type FieldViolation } from '@paddock/contracts';
import { validationError, zodViolations } from '@paddock/kit';
import type { z } from 'zod';

/** Every error the runner replies with; each names the object and what to do. */
export const runnerErrors = {
  sandboxNotFound: (sandboxId: string): PaddockError =>
    new PaddockError('not_found', `sandbox ${sandboxId} not found on this runner`, {
      reason: 'CWSANDBOX_SANDBOX_NOT_FOUND',
      metadata: { sandboxId },
    }),
  notRunning: (sandboxId: string, state: string): PaddockError =>
    new PaddockError('failed_precondition', `sandbox ${sandboxId} is ${state}, not STATE_RUNNING; wait until it runs`, {
      reason: 'CWSANDBOX_SANDBOX_NOT_RUNNING',
      metadata: { sandboxId, state },
    }),
  terminated: (sandboxId: string, state: string): PaddockError =>
    new PaddockError('failed_precondition', `sandbox ${sandboxId} has ended (${state})`, {
      reason: 'CWSANDBOX_SANDBOX_TERMINATED',
      metadata: { sandboxId, state },
    }),
  notTerminal: (sandboxId: string, state: string): PaddockError =>
    new PaddockError('failed_precondition', `sandbox ${sandboxId} is ${state}: the logs of a live sandbox cannot be deleted; stop it first`, {
      reason: 'CWSANDBOX_SANDBOX_NOT_TERMINAL',
      metadata: { sandboxId, state },
    }),
  logsDeleted: (sandboxId: string): PaddockError =>
    new PaddockError('failed_precondition', `the logs of sandbox ${sandboxId} were deleted`, {
      reason: 'CWSANDBOX_LOGS_DELETED',
      metadata: { sandboxId },
    }),
  alreadyExists: (sandboxId: string): PaddockError =>
    new PaddockError('already_exists', `sandbox ${sandboxId} already exists with a different spec; choose a new sandboxId`, {
      reason: 'CWSANDBOX_INVALID_REQUEST',
      violations: [
        { field: 'sandboxId', rule: 'unique', description: 'a create with this sandboxId was already accepted with another spec' },
      ],
    }),
  policyViolation: (violations: FieldViolation[]): PaddockError =>
    new PaddockError(
      'invalid_argument',
      `the sandbox spec violates the runner policy: ${violations.map((v) => `${v.field} (${v.rule})`).join(', ')}`,
      { reason: 'CWSANDBOX_POLICY_VIOLATION', violations },
    ),
  atCapacity: (detail: string): PaddockError =>
    new PaddockError('resource_exhausted', `runner is at capacity: ${detail}; retry later or on another runner`, {
      reason: 'CWSANDBOX_RUNNER_AT_CAPACITY',
    }),
  fileNotFound: (path: string): PaddockError =>
    new PaddockError('not_found', `file ${path} not found in the sandbox`, { reason: 'CWSANDBOX_FILE_NOT_FOUND', metadata: { path } }),
  fileTooLarge: (path: string, size: number, limit: number): PaddockError =>
    new PaddockError('invalid_argument', `file ${path} is ${size} bytes, over the ${limit}-byte inline limit; read it with a streamId`, {
      reason: 'CWSANDBOX_FILE_TOO_LARGE',
      violations: [{ field: 'path', rule: 'max_inline_bytes', description: 'file too large for an inline read', requested: size, limit }],
    }),
};

/** A request body that failed its schema: every issue becomes a field violation (under `prefix`). */
export function invalidRequest(error: z.ZodError, prefix?: string): PaddockError {
  return validationError(zodViolations(error, prefix ? { prefix } : {}), 'CWSANDBOX_INVALID_REQUEST');
}

/**
 * Maps whatever a backend threw to the wire error model. Backends may throw PaddockError
 * themselves; file-system errno codes map to the data-plane reasons of the product's error model (packages/contracts errors).
 */
export function toPaddockError(e: unknown, context: { path?: string } = {}): PaddockError {
  if (isPaddockError(e)) return e;
  const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  const message = e instanceof Error ? e.message : String(e);
  const path = context.path ?? '';
  switch (code) {
    case 'ENOENT':
      return runnerErrors.fileNotFound(path);
    case 'EISDIR':
      return new PaddockError('invalid_argument', `${path} is a directory`, { reason: 'CWSANDBOX_INVALID_REQUEST' });
    case 'ENOTDIR':
      return new PaddockError('invalid_argument', `${path}: a parent is not a directory`, { reason: 'CWSANDBOX_INVALID_REQUEST' });
    case 'EACCES':
    case 'EPERM':
      return new PaddockError('permission_denied', `permission denied on ${path}`, { reason: 'CWSANDBOX_INVALID_REQUEST' });
    case 'EFBIG':
    case 'ENOSPC':
    case 'EDQUOT':
      return new PaddockError('resource_exhausted', `no space left writing ${path}: ${message}`, { reason: 'CWSANDBOX_FILE_TOO_LARGE' });
    default:
      return new PaddockError('internal', `runner error: ${message}`, { reason: 'CWSANDBOX_INTERNAL' });
  }
}

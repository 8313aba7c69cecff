import { PaddockError } from '@paddock/contracts';

export function sandboxNotFound(sandboxId: string): PaddockError {
  return new PaddockError('not_found', `sandbox ${sandboxId} not found on this runner`, {
    reason: 'CWSANDBOX_SANDBOX_NOT_FOUND',
    metadata: { sandboxId },
  });
}

export function sandboxNotRunning(sandboxId: string, state: string): PaddockError {
  return new PaddockError('failed_precondition', `sandbox ${sandboxId} is not running (state ${state})`, {
    reason: 'CWSANDBOX_SANDBOX_NOT_RUNNING',
    metadata: { sandboxId, state },
  });
}

/** A connection to a port the sandbox's spec does not make public (same rule as the runner's portForward). */
export function portNotServed(sandboxId: string, port: number): PaddockError {
  return new PaddockError('failed_precondition', `port ${port} is not a public service of sandbox ${sandboxId}`, {
    reason: 'CWSANDBOX_INVALID_REQUEST',
    violations: [{ field: 'port', rule: 'public_service', description: 'a port the sandbox declares in services[] with VISIBILITY_PUBLIC' }],
    metadata: { sandboxId, port: String(port) },
  });
}

/** Maps an errno reported by a file handler inside the sandbox to the API's error model. */
export function fileError(sandboxId: string, path: string, errno: string, message: string): PaddockError {
  const metadata = { sandboxId, path, errno };
  switch (errno) {
    case 'ENOENT':
      return new PaddockError('not_found', `path: ${path} not found in sandbox ${sandboxId}`, {
        reason: 'CWSANDBOX_FILE_NOT_FOUND',
        metadata,
      });
    case 'ENOTRUNNING':
      return new PaddockError('failed_precondition', `sandbox ${sandboxId} is not running`, {
        reason: 'CWSANDBOX_SANDBOX_NOT_RUNNING',
        metadata,
      });
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return new PaddockError('permission_denied', `path: ${path} is not writable or readable in the sandbox (${message})`, {
        metadata,
      });
    case 'ENOSPC':
    case 'EDQUOT':
    case 'EFBIG':
      return new PaddockError('resource_exhausted', `path: ${path}: the sandbox's disk limit is reached (${message})`, {
        reason: 'CWSANDBOX_FILE_TOO_LARGE',
        metadata,
      });
    case 'EISDIR':
    case 'ENOTDIR':
    case 'ENOTEMPTY':
    case 'EEXIST':
    case 'EINVAL':
    case 'ELOOP':
    case 'ENAMETOOLONG':
      return new PaddockError('invalid_argument', `path: ${path}: ${message}`, {
        reason: 'CWSANDBOX_INVALID_REQUEST',
        violations: [{ field: 'path', rule: errno.toLowerCase(), description: message }],
        metadata,
      });
    default:
      return new PaddockError('internal', `path: ${path}: ${message} (${errno})`, { reason: 'CWSANDBOX_INTERNAL', metadata });
  }
}

/**
 * Exit codes (documented in the CLI README): 0 success, 1 server refusal, 2 usage error,
 * 3 not found, 4 conflict or failed precondition (stale etag, already exists).
 */
export const EXIT = { ok: 0, refused: 1, usage: 2, notFound: 3, conflict: 4 } as const;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT.usage);
  }
}

/** The exit code for a Connect error code returned by a Paddock server. */
export function exitCodeForApiCode(code: string): number {
  switch (code) {
    case 'not_found':
      return EXIT.notFound;
    case 'failed_precondition':
    case 'already_exists':
    case 'aborted':
      return EXIT.conflict;
    case 'invalid_argument':
    case 'permission_denied':
    case 'unauthenticated':
    case 'resource_exhausted':
    case 'unavailable':
    case 'internal':
    default:
      return EXIT.refused;
  }
}

/** One `  - field: rule` line; servers often repeat the field inside the description already. */
export function violationLine(field: string | undefined, description: string | undefined): string {
  const f = field ?? '';
  const d = description ?? '';
  return `  - ${f && !d.startsWith(`${f}:`) ? `${f}: ${d}` : d}`;
}

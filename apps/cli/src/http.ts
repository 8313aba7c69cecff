import { CliError, EXIT, exitCodeForApiCode, violationLine } from './errors';

export interface ApiErrorShape {
  code: string;
  message: string;
  details?: unknown[];
}

/** A server refusal, printed as `Error: <doing what>: <code>: <message>` (the seeds' shape). */
export class ApiError extends CliError {
  constructor(
    readonly doing: string,
    readonly body: ApiErrorShape,
    readonly status: number,
  ) {
    super(`${doing}: ${body.code}: ${body.message}${violationsSuffix(body)}`, exitCodeForApiCode(body.code));
    this.name = 'ApiError';
  }
}

function violationsSuffix(body: ApiErrorShape): string {
  const lines: string[] = [];
  for (const d of body.details ?? []) {
    if (typeof d !== 'object' || d === null) continue;
    const fv = (d as { fieldViolations?: { field?: string; description?: string }[] }).fieldViolations;
    for (const v of fv ?? []) {
      // The message usually already names the first violation (its field or its rule); list only
      // the others, so a one-violation error stays the seeds' one line.
      const named = (v.description && body.message.includes(v.description)) || (v.field && body.message.includes(v.field));
      if (!named) lines.push(violationLine(v.field, v.description));
    }
  }
  return lines.length ? `\n${lines.join('\n')}` : '';
}

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly token: string,
  ) {}

  async request<T>(doing: string, method: string, path: string, body?: unknown): Promise<T> {
    if (!this.token) {
      throw new CliError(`${doing}: unauthenticated: no API token; run \`cwic auth login\` or set PADDOCK_API_KEY`, EXIT.refused);
    }
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      const cause = e instanceof Error && e.cause instanceof Error ? e.cause.message : String(e);
      throw new CliError(`${doing}: unavailable: cannot reach ${this.baseUrl} (${cause})`, EXIT.refused);
    }
    const text = await res.text();
    let parsed: unknown = undefined;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
    }
    if (!res.ok) {
      const shape =
        parsed && typeof parsed === 'object' && 'code' in parsed && 'message' in parsed
          ? (parsed as ApiErrorShape)
          : { code: res.status === 404 ? 'not_found' : 'internal', message: text || res.statusText };
      throw new ApiError(doing, shape, res.status);
    }
    return parsed as T;
  }
}

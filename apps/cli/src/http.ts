import type * as Http from 'node:http';
import { CliError, EXIT, exitCodeForApiCode, violationLine } from './errors';
import { nodeRequire } from './lazy';

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

interface RawResponse {
  status: number;
  statusText: string;
  text: string;
}

/**
 * One request with `node:http` (or `node:https`), loaded on first use. Not `fetch`: undici loads
 * ~30 ms of modules on a cold start, and every `cwic` command pays it (a CLI is all cold starts).
 */
function send(url: string, method: string, token: string, body: string | undefined): Promise<RawResponse> {
  return new Promise<RawResponse>((resolve, reject) => {
    const u = new URL(url);
    const client = nodeRequire(u.protocol === 'https:' ? 'node:https' : 'node:http') as typeof Http;
    const headers: Record<string, string | number> = { authorization: `Bearer ${token}`, accept: '*/*' };
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(body);
    }
    const req = client.request(u, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A connection error's text; a refused dual-stack connect is an AggregateError with no message. */
function errorText(e: unknown): string {
  if (e instanceof AggregateError && !e.message) return e.errors.map(errorText).join('; ');
  if (e instanceof Error) return e.message || ((e as NodeJS.ErrnoException).code ?? e.name);
  return String(e);
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
    let res: RawResponse;
    try {
      res = await send(`${this.baseUrl}${path}`, method, this.token, body === undefined ? undefined : JSON.stringify(body));
    } catch (e) {
      const cause = errorText(e);
      throw new CliError(`${doing}: unavailable: cannot reach ${this.baseUrl} (${cause})`, EXIT.refused);
    }
    const text = res.text;
    let parsed: unknown = undefined;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
    }
    if (res.status < 200 || res.status > 299) {
      const shape =
        parsed && typeof parsed === 'object' && 'code' in parsed && 'message' in parsed
          ? (parsed as ApiErrorShape)
          : { code: res.status === 404 ? 'not_found' : 'internal', message: text || res.statusText };
      throw new ApiError(doing, shape, res.status);
    }
    return parsed as T;
  }
}

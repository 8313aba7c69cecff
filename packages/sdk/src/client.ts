import { PaddockError, errorFromBody, isErrorBody } from './errors';

export interface ClientOptions {
  /** Gateway base URL; default `PADDOCK_GATEWAY_URL` or `http://127.0.0.1:8081`. */
  baseUrl?: string;
  /** API token (`pdk_...`); default `PADDOCK_API_KEY`. */
  apiKey?: string;
  /** Attempts after the first one for retryable failures of idempotent calls (default 5). */
  maxRetries?: number;
  /** First backoff delay in ms (doubles, capped at `maxBackoffMs`, with jitter). Default 100. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Per-request timeout in ms (default 300 s, as the Python client). */
  requestTimeoutMs?: number;
}

export interface RequestOptions {
  body?: unknown;
  /** Raw bytes body (sent as application/octet-stream). */
  bytes?: Uint8Array;
  query?: Record<string, string | number | boolean | string[] | undefined>;
  /** Safe to send twice: enables retries on network errors and retryable codes. */
  idempotent: boolean;
  signal?: AbortSignal;
}

export const DEFAULT_GATEWAY_URL = 'http://127.0.0.1:8081';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Delay before retry number `attempt` (0-based): exponential with full jitter in [d/2, d]. */
export function backoffDelay(attempt: number, initialMs: number, maxMs: number, random: () => number = Math.random): number {
  const d = Math.min(maxMs, initialMs * 2 ** attempt);
  return Math.round(d / 2 + (random() * d) / 2);
}

/** A connection-level failure (refused, reset, DNS): fetch rejects with a TypeError. */
function isNetworkError(e: unknown): boolean {
  return e instanceof TypeError || (e instanceof Error && /ECONNREFUSED|ECONNRESET|EPIPE|socket hang up|fetch failed/i.test(e.message));
}

/** HTTP plumbing shared by every SDK object: auth header, JSON, error mapping and retries. */
export class PaddockClient {
  readonly baseUrl: string;
  readonly apiKey: string | undefined;
  readonly maxRetries: number;
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
  readonly requestTimeoutMs: number;
  /** Whether the gateway answers `:wait` long polls (cleared on the first that it does not know). */
  longPoll = true;

  constructor(opts: ClientOptions = {}) {
    this.baseUrl = (opts.baseUrl ?? process.env.PADDOCK_GATEWAY_URL ?? DEFAULT_GATEWAY_URL).replace(/\/+$/, '');
    this.apiKey = opts.apiKey ?? process.env.PADDOCK_API_KEY;
    this.maxRetries = opts.maxRetries ?? 5;
    this.initialBackoffMs = opts.initialBackoffMs ?? 100;
    this.maxBackoffMs = opts.maxBackoffMs ?? 2_000;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 300_000;
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}), ...extra };
  }

  url(path: string, query?: RequestOptions['query']): string {
    const u = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v === undefined) continue;
      if (Array.isArray(v)) for (const x of v) u.searchParams.append(k, x);
      else u.searchParams.set(k, String(v));
    }
    return u.toString();
  }

  /** Sends one request (retrying when allowed) and returns the raw successful Response. */
  async raw(method: string, path: string, opts: RequestOptions): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await this.once(method, path, opts);
        if (res.ok) return res;
        const err = await this.toError(res);
        if (!(opts.idempotent && err.retryable && attempt < this.maxRetries)) throw err;
      } catch (e) {
        const retry = opts.idempotent && attempt < this.maxRetries && (isNetworkError(e) || (e instanceof PaddockError && e.retryable));
        if (!retry) throw e instanceof PaddockError || !isNetworkError(e) ? e : new PaddockError('unavailable', `gateway unreachable: ${(e as Error).message}`);
      }
      await sleep(backoffDelay(attempt, this.initialBackoffMs, this.maxBackoffMs));
    }
  }

  async json<T>(method: string, path: string, opts: RequestOptions): Promise<T> {
    const res = await this.raw(method, path, opts);
    return (await res.json()) as T;
  }

  private once(method: string, path: string, opts: RequestOptions): Promise<Response> {
    const headers = this.headers();
    let body: string | Uint8Array | undefined;
    if (opts.bytes) {
      headers['content-type'] = 'application/octet-stream';
      body = opts.bytes;
    } else if (opts.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.body);
    }
    const timeout = AbortSignal.timeout(this.requestTimeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    return fetch(this.url(path, opts.query), { method, headers, body, signal });
  }

  private async toError(res: Response): Promise<PaddockError> {
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (isErrorBody(parsed)) return errorFromBody(parsed, res.status);
    const code = res.status === 503 || res.status === 502 || res.status === 504 ? 'unavailable' : res.status >= 500 ? 'internal' : 'invalid_argument';
    return new PaddockError(code, `HTTP ${res.status}: ${text.slice(0, 200)}`, { httpStatus: res.status });
  }
}

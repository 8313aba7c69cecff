import {
  ApiErrorBodySchema,
  ManagedRunnerSchema,
  PaddockError,
  type FieldViolation,
  type ManagedRunner,
} from '@paddock/contracts';
import type { Logger } from '../log';
import type { ProviderSettings } from './config';

/**
 * The control plane's RunnerManagementService over REST (`/v1/sandbox/managedRunners`), with
 * the response shapes of `@paddock/contracts`. Requests the server never received (connection
 * refused, 503) are retried a few times; nothing else is, so a PATCH is never sent twice.
 */
export type ApiErrorKind = 'http' | 'unreachable' | 'timeout' | 'bad_response';

export class ApiError extends Error {
  constructor(
    readonly kind: ApiErrorKind,
    message: string,
    readonly details: { status?: number; code?: string; reason?: string; violations?: FieldViolation[]; requestId?: string } = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface ClientOptions {
  settings: ProviderSettings;
  log: Logger;
  userAgent: string;
  /** Pauses between attempts of a request the server never received. */
  retryDelaysMs?: readonly number[];
}

const RUNNERS = 'v1/sandbox/managedRunners';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function networkCause(e: unknown): string {
  const cause = e instanceof Error ? (e.cause as { code?: string; message?: string } | undefined) : undefined;
  return cause?.code ?? cause?.message ?? (e instanceof Error ? e.message : String(e));
}

/** Connection failures that prove the request was never delivered. */
const NEVER_DELIVERED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

export class ControlPlaneClient {
  private readonly retryDelaysMs: readonly number[];
  constructor(private readonly opts: ClientOptions) {
    this.retryDelaysMs = opts.retryDelaysMs ?? [250, 1000];
  }

  get endpoint(): string {
    return this.opts.settings.endpoint.toString();
  }

  /** The runner by id (or UUID); null when the API answers not found. */
  async getRunner(ref: string): Promise<ManagedRunner | null> {
    try {
      return this.runner(await this.call('GET', `${RUNNERS}/${encodeURIComponent(ref)}`));
    } catch (e) {
      if (e instanceof ApiError && e.details.status === 404) return null;
      throw e;
    }
  }

  async createRunner(body: Record<string, unknown>): Promise<ManagedRunner> {
    return this.runner(await this.call('POST', RUNNERS, undefined, body));
  }

  async updateRunner(ref: string, updateMask: readonly string[], body: Record<string, unknown>): Promise<ManagedRunner> {
    return this.runner(await this.call('PATCH', `${RUNNERS}/${encodeURIComponent(ref)}`, { updateMask: updateMask.join(',') }, body));
  }

  /** Starts the decommission; a runner already gone is not an error. */
  async deleteRunner(ref: string): Promise<void> {
    await this.call('DELETE', `${RUNNERS}/${encodeURIComponent(ref)}`, { allowMissing: 'true' });
  }

  private runner(json: unknown): ManagedRunner {
    const parsed = ManagedRunnerSchema.safeParse(json);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      throw new ApiError('bad_response', `the API answered with a managed runner this provider cannot read (${first ? `${first.path.join('.')}: ${first.message}` : 'invalid'})`);
    }
    return parsed.data;
  }

  private async call(method: string, path: string, query?: Record<string, string>, body?: unknown): Promise<unknown> {
    const url = new URL(path, this.opts.settings.endpoint);
    for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, v);
    for (let attempt = 0; ; attempt++) {
      const started = Date.now();
      let res: Response;
      try {
        res = await fetch(url, {
          method,
          headers: {
            authorization: `Bearer ${this.opts.settings.token}`,
            accept: 'application/json',
            'user-agent': this.opts.userAgent,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(this.opts.settings.timeoutMs),
        });
      } catch (e) {
        if (e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError')) {
          throw new ApiError('timeout', `${method} ${url.pathname}: no answer within ${this.opts.settings.timeoutMs} ms`);
        }
        const cause = networkCause(e);
        const delay = this.retryDelaysMs[attempt];
        this.opts.log.log('warn', 'API request failed', { method, path: url.pathname, cause, attempt });
        if (delay !== undefined && NEVER_DELIVERED.has(cause)) {
          await sleep(delay);
          continue;
        }
        throw new ApiError('unreachable', `${method} ${url.pathname}: ${cause}`);
      }
      const text = await res.text();
      const requestId = res.headers.get('x-request-id') ?? undefined;
      this.opts.log.log('debug', 'API request', { method, path: url.pathname, status: res.status, ms: Date.now() - started, request_id: requestId });
      const delay = this.retryDelaysMs[attempt];
      if (res.status === 503 && delay !== undefined) {
        await sleep(delay);
        continue;
      }
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : {};
      } catch {
        throw new ApiError(res.ok ? 'bad_response' : 'http', `${method} ${url.pathname}: HTTP ${res.status} with a body that is not JSON`, { status: res.status, ...(requestId ? { requestId } : {}) });
      }
      if (res.ok) return json;
      const parsed = ApiErrorBodySchema.safeParse(json);
      if (!parsed.success) throw new ApiError('http', `${method} ${url.pathname}: HTTP ${res.status}`, { status: res.status, ...(requestId ? { requestId } : {}) });
      const err = PaddockError.fromBody(parsed.data);
      throw new ApiError('http', err.message, {
        status: res.status,
        code: err.code,
        violations: err.violations,
        ...(err.reason ? { reason: err.reason } : {}),
        ...(requestId ? { requestId } : {}),
      });
    }
  }
}

import { ApiErrorBodySchema, type FieldViolation } from '@paddock/contracts';
import type { z } from 'zod';

/** An API's refusal, as its `{code, message, details}` body says it (or the transport's failure). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly reason: string | undefined,
    readonly violations: FieldViolation[],
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** True for a refusal because the caller's role does not allow the request. */
  get forbidden(): boolean {
    return this.status === 403;
  }
}

/** Where one API is and the bearer token that every call carries. */
export interface ApiTarget {
  /** `''` = this page's origin (the control plane serves the console). */
  baseUrl: string;
  token: string;
}

export type Query = Record<string, string | number | boolean | string[] | undefined>;

export function withQuery(path: string, query: Query | undefined): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined) continue;
    if (Array.isArray(v)) v.forEach((x) => params.append(k, x));
    else params.set(k, String(v));
  }
  const qs = params.toString();
  return qs ? `${path}${path.includes('?') ? '&' : '?'}${qs}` : path;
}

/** Turns a non-2xx response into an ApiError (any body: the API's error shape, or text). */
export async function errorOf(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  const body = ApiErrorBodySchema.safeParse(json);
  if (!body.success) return new ApiError(res.status, `http_${res.status}`, text.slice(0, 300) || res.statusText, undefined, []);
  let reason: string | undefined;
  const violations: FieldViolation[] = [];
  for (const d of body.data.details) {
    if ('reason' in d && typeof d.reason === 'string') reason = d.reason;
    if ('fieldViolations' in d && Array.isArray(d.fieldViolations)) violations.push(...(d.fieldViolations as FieldViolation[]));
  }
  return new ApiError(res.status, body.data.code, body.data.message, reason, violations);
}

export interface RequestOptions<T> {
  query?: Query;
  /** JSON body. */
  json?: unknown;
  /** Raw body (file uploads). */
  bytes?: Blob | ArrayBuffer;
  schema?: z.ZodType<T>;
  signal?: AbortSignal;
}

/** Sends the request and returns the raw Response after checking its status. */
export async function send(target: ApiTarget, method: string, path: string, opts: Omit<RequestOptions<unknown>, 'schema'> = {}): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${target.token}` };
  let body: BodyInit | undefined;
  if (opts.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.json);
  } else if (opts.bytes !== undefined) {
    headers['content-type'] = 'application/octet-stream';
    body = opts.bytes;
  }
  let res: Response;
  try {
    res = await fetch(`${target.baseUrl}${withQuery(path, opts.query)}`, { method, headers, body, signal: opts.signal ?? null });
  } catch (e) {
    if (e instanceof DOMException && e.name === 'AbortError') throw e;
    throw new ApiError(0, 'unavailable', `cannot reach ${target.baseUrl || window.location.origin}: ${e instanceof Error ? e.message : String(e)}`, undefined, []);
  }
  if (!res.ok) throw await errorOf(res);
  return res;
}

/** A JSON call, its response checked against the contract's schema when one is given. */
export async function request<T>(target: ApiTarget, method: string, path: string, opts: RequestOptions<T> = {}): Promise<T> {
  const res = await send(target, method, path, opts);
  const text = await res.text();
  const json: unknown = text ? JSON.parse(text) : {};
  if (!opts.schema) return json as T;
  const parsed = opts.schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ApiError(res.status, 'contract_mismatch', `${method} ${path}: the response does not match its contract at ${issue?.path.join('.') ?? '(root)'}: ${issue?.message ?? ''}`, undefined, []);
  }
  return parsed.data;
}

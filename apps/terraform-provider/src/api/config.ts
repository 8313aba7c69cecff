import { attr, isUnknown, type Value } from '../cty/value';
import { error, type Diagnostic } from '../framework/diagnostics';
import { string, type Schema } from '../framework/schema';

/**
 * The provider block: `token`, `endpoint`, `http_timeout`. As in CoreWeave's provider, the
 * environment wins over the configuration (`COREWEAVE_API_TOKEN`, `COREWEAVE_API_ENDPOINT`,
 * `COREWEAVE_HTTP_TIMEOUT`), so a token never has to be written in a configuration file.
 */
export const DEFAULT_ENDPOINT = 'https://api.coreweave.com/';
export const DEFAULT_HTTP_TIMEOUT_MS = 10_000;

export const PROVIDER_SCHEMA: Schema = {
  version: 0,
  description: 'CoreWeave: manages Sandbox managed runners through the control-plane API.',
  attributes: {
    token: string('API access token with SANDBOX_ADMIN. The environment variable `COREWEAVE_API_TOKEN` takes precedence; prefer it to writing the token in a file.', {
      optional: true,
      sensitive: true,
    }),
    endpoint: string(`Base URL of the API; \`COREWEAVE_API_ENDPOINT\` takes precedence. Default \`${DEFAULT_ENDPOINT}\`.`, { optional: true }),
    http_timeout: string('Timeout of one HTTP request, a duration such as `10s` or `1m30s`; `COREWEAVE_HTTP_TIMEOUT` takes precedence. Default `10s`.', { optional: true }),
  },
};

export interface ProviderSettings {
  token: string;
  endpoint: URL;
  timeoutMs: number;
}

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A Go-style duration (`10s`, `1m30s`, `500ms`) in milliseconds, or undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const t = text.trim();
  if (!/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(t)) return undefined;
  let ms = 0;
  for (const m of t.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) ms += Number(m[1]) * (UNIT_MS[m[2] ?? 's'] ?? 0);
  return ms;
}

/** A base URL ending in `/`, so API paths resolve under any path prefix it has. */
function endpointUrl(text: string): URL | undefined {
  try {
    const u = new URL(text);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
    if (!u.pathname.endsWith('/')) u.pathname += '/';
    return u;
  } catch {
    return undefined;
  }
}

type Env = Record<string, string | undefined>;

function pick(config: Value, name: string, env: Env, variable: string): { value: string | undefined; source: string; unknown: boolean } {
  const fromEnv = env[variable];
  if (fromEnv !== undefined && fromEnv !== '') return { value: fromEnv, source: `the environment variable ${variable}`, unknown: false };
  const v = attr(config, name);
  if (isUnknown(v)) return { value: undefined, source: `the provider argument ${name}`, unknown: true };
  return { value: typeof v === 'string' && v !== '' ? v : undefined, source: `the provider argument ${name}`, unknown: false };
}

/** Checks what can be checked before the values are final (`terraform validate`). */
export function validateProviderConfig(config: Value): Diagnostic[] {
  const out: Diagnostic[] = [];
  const endpoint = attr(config, 'endpoint');
  if (typeof endpoint === 'string' && endpoint !== '' && !endpointUrl(endpoint)) {
    out.push(error('Invalid endpoint', `endpoint must be an http(s) URL such as ${DEFAULT_ENDPOINT}; got ${JSON.stringify(endpoint)}.`, ['endpoint']));
  }
  const timeout = attr(config, 'http_timeout');
  if (typeof timeout === 'string' && timeout !== '' && !(parseDuration(timeout) ?? 0)) {
    out.push(error('Invalid http_timeout', `http_timeout must be a positive duration such as "10s" or "1m30s"; got ${JSON.stringify(timeout)}.`, ['http_timeout']));
  }
  return out;
}

/** The settings every API call uses, or the diagnostics that explain why there are none. */
export function resolveProviderSettings(config: Value, env: Env): { settings?: ProviderSettings; diagnostics: Diagnostic[] } {
  const out: Diagnostic[] = [];
  const token = pick(config, 'token', env, 'COREWEAVE_API_TOKEN');
  const endpoint = pick(config, 'endpoint', env, 'COREWEAVE_API_ENDPOINT');
  const timeout = pick(config, 'http_timeout', env, 'COREWEAVE_HTTP_TIMEOUT');
  for (const [name, p] of [['token', token], ['endpoint', endpoint], ['http_timeout', timeout]] as const) {
    if (p.unknown) out.push(error(`Unknown ${name}`, `The provider argument ${name} depends on a value that is not known until apply; the provider needs it to plan. Use a value known at plan time, or set it through the environment.`, [name]));
  }
  if (!token.value && !token.unknown) {
    out.push(error('Missing API token', 'The provider needs an API access token with SANDBOX_ADMIN: export COREWEAVE_API_TOKEN="..." (preferred) or set the provider argument token. None was given.', ['token']));
  }
  const url = endpointUrl(endpoint.value ?? DEFAULT_ENDPOINT);
  if (!url) out.push(error('Invalid endpoint', `The endpoint from ${endpoint.source} must be an http(s) URL such as ${DEFAULT_ENDPOINT}; got ${JSON.stringify(endpoint.value)}.`, ['endpoint']));
  const timeoutMs = timeout.value === undefined ? DEFAULT_HTTP_TIMEOUT_MS : parseDuration(timeout.value);
  if (!timeoutMs) {
    out.push(error('Invalid http_timeout', `The HTTP timeout from ${timeout.source} must be a positive duration such as "10s" or "1m30s"; got ${JSON.stringify(timeout.value)}.`, ['http_timeout']));
  }
  if (out.length > 0 || !token.value || !url || !timeoutMs) return { diagnostics: out };
  return { settings: { token: token.value, endpoint: url, timeoutMs }, diagnostics: [] };
}

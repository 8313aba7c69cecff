import { parseCidr } from '@paddock/policy';
import { InvalidEnvironmentError, requireEnvironment } from '@paddock/kit';
import { z } from 'zod';
import { parseConsoleOrigins } from '../http/cors';

/**
 * The gateway's whole configuration, from the environment (12-factor). Durations are in
 * milliseconds unless the name says otherwise. Tests build a config with `parseGatewayEnv({...})`.
 */
const ms = (def: number) => z.coerce.number().int().nonnegative().default(def);

export const GatewayEnvSchema = z.object({
  GATEWAY_PORT: z.coerce.number().int().min(0).max(65535).default(8081),
  GATEWAY_HOST: z.string().default('0.0.0.0'),
  /**
   * Base of the URLs reported for sandboxes' public services (`<base>/s/<sandboxId>/<port>/`),
   * e.g. the address a proxy in front of the gateway answers on; unset = the gateway's own
   * listening address (`http://127.0.0.1:<port>`).
   */
  GATEWAY_SERVICE_URL_BASE: z.url().optional(),
  /** Port of the coreweave.sandbox.v1 gRPC/Connect server (same host as REST); 0 = any free port. */
  GATEWAY_GRPC_PORT: z.coerce.number().int().min(0).max(65535).default(8082),
  /** PEM certificate and key of the gRPC server: both set = TLS, neither = cleartext (h2c). */
  GATEWAY_GRPC_TLS_CERT: z.string().min(1).optional(),
  GATEWAY_GRPC_TLS_KEY: z.string().min(1).optional(),
  DATABASE_URL: z.string().min(1, 'DATABASE_URL is required'),
  NATS_URL: z.string().min(1, 'NATS_URL is required'),
  /** Path of the gateway's NATS credentials (`.creds`, mode 0600); unset = no credentials. */
  NATS_CREDS: z.string().min(1).optional(),
  /** How long a token lookup (hit or miss) is trusted: the bound on revocation delay. */
  GATEWAY_AUTH_CACHE_MS: ms(5_000),
  /**
   * How long the owning runner of a live sandbox is trusted without reading its row (exec and
   * file calls); 0 = read the row on every call. Another gateway's news (a terminal state it
   * applied) reaches this one within this bound, or at once through the runner's refusal.
   */
  GATEWAY_SANDBOX_CACHE_MS: ms(5_000),
  /** Period of the reconciler (re-drive stuck sandboxes, runner-lost, reap unknown). */
  GATEWAY_RECONCILE_INTERVAL_MS: ms(3_000),
  /** A non-terminal sandbox untouched this long is re-driven by the reconciler. */
  GATEWAY_STUCK_AFTER_MS: ms(2_000),
  /** A runner silent for this long (beyond 3 heartbeat intervals) loses its sandboxes (FAILED RUNNER_LOST). */
  GATEWAY_RUNNER_LOST_GRACE_MS: ms(15_000),
  /** Timeout of one request/reply to a runner. */
  GATEWAY_RPC_TIMEOUT_MS: ms(5_000),
  /** A `:wait` long poll re-reads its row this often when no state event wakes it. */
  GATEWAY_WAIT_RECHECK_MS: ms(250),
  /** Maximum body of a JSON request (file writes are base64 inside JSON). */
  GATEWAY_BODY_LIMIT_BYTES: ms(96 * 1024 * 1024),
  GATEWAY_LOG_LEVEL: z.enum(['silent', 'error', 'warn', 'log', 'debug']).default('log'),
  /**
   * Which proxies may tell the gateway the client's address (X-Forwarded-For), the address each
   * runner policy's `controlPlaneAccess.sourceIpAllowlist` is checked against: `false` (default:
   * the socket peer is the client), `true` (any peer: only when every connection comes through
   * your proxy), or a comma-separated list of proxy addresses or prefixes (`loopback`,
   * `linklocal` and `uniquelocal` name those ranges).
   */
  GATEWAY_TRUST_PROXY: z
    .string()
    .default('false')
    .transform((v, ctx): TrustProxy => {
      const t = v.trim();
      if (t === '' || t === 'false') return false;
      if (t === 'true') return true;
      const list = t.split(',').map((x) => x.trim());
      const bad = list.filter((x) => !PROXY_NAMES.has(x) && !parseCidr(x.includes('/') ? x : `${x}/${x.includes(':') ? 128 : 32}`));
      if (bad.length) ctx.addIssue({ code: 'custom', message: `must be false, true or a list of proxy addresses/prefixes; cannot read ${bad.map((b) => JSON.stringify(b)).join(', ')}` });
      return list;
    }),
  /**
   * Origins of the web console allowed to call this gateway from a page (CORS), comma-separated
   * `scheme://host[:port]`; empty = none. The console is served by the control plane, so this is
   * usually the control plane's public URL.
   */
  GATEWAY_CONSOLE_ORIGINS: z
    .string()
    .default('')
    .transform((v, ctx): string[] => {
      const { origins, bad } = parseConsoleOrigins(v);
      if (bad.length) ctx.addIssue({ code: 'custom', message: `must be origins like http://127.0.0.1:8080 (scheme, host, port; no path); cannot read ${bad.map((b) => JSON.stringify(b)).join(', ')}` });
      return origins;
    }),
});
export type GatewayEnv = z.infer<typeof GatewayEnvSchema>;

/** What Fastify's `trustProxy` accepts and we allow. */
export type TrustProxy = boolean | string[];
const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

export interface GatewayConfig {
  port: number;
  host: string;
  grpcPort: number;
  grpcTls?: { certFile: string; keyFile: string };
  databaseUrl: string;
  natsUrl: string;
  natsCredsFile?: string;
  authCacheMs: number;
  sandboxCacheMs: number;
  reconcileIntervalMs: number;
  stuckAfterMs: number;
  runnerLostGraceMs: number;
  rpcTimeoutMs: number;
  waitRecheckMs: number;
  bodyLimitBytes: number;
  logLevel: GatewayEnv['GATEWAY_LOG_LEVEL'];
  trustProxy: TrustProxy;
  /** Web console origins allowed by CORS. */
  consoleOrigins: string[];
  serviceUrlBase?: string;
}

export function parseGatewayEnv(env: Record<string, string | undefined>): GatewayConfig {
  const e = requireEnvironment(GatewayEnvSchema, env, 'gateway');
  if (Boolean(e.GATEWAY_GRPC_TLS_CERT) !== Boolean(e.GATEWAY_GRPC_TLS_KEY)) {
    throw new InvalidEnvironmentError('invalid gateway configuration:\n  - GATEWAY_GRPC_TLS_CERT and GATEWAY_GRPC_TLS_KEY: set both (TLS) or neither (cleartext)', [
      'GATEWAY_GRPC_TLS_CERT and GATEWAY_GRPC_TLS_KEY: set both (TLS) or neither (cleartext)',
    ]);
  }
  return {
    port: e.GATEWAY_PORT,
    host: e.GATEWAY_HOST,
    grpcPort: e.GATEWAY_GRPC_PORT,
    ...(e.GATEWAY_GRPC_TLS_CERT && e.GATEWAY_GRPC_TLS_KEY ? { grpcTls: { certFile: e.GATEWAY_GRPC_TLS_CERT, keyFile: e.GATEWAY_GRPC_TLS_KEY } } : {}),
    databaseUrl: e.DATABASE_URL,
    natsUrl: e.NATS_URL,
    ...(e.NATS_CREDS ? { natsCredsFile: e.NATS_CREDS } : {}),
    authCacheMs: e.GATEWAY_AUTH_CACHE_MS,
    sandboxCacheMs: e.GATEWAY_SANDBOX_CACHE_MS,
    reconcileIntervalMs: e.GATEWAY_RECONCILE_INTERVAL_MS,
    stuckAfterMs: e.GATEWAY_STUCK_AFTER_MS,
    runnerLostGraceMs: e.GATEWAY_RUNNER_LOST_GRACE_MS,
    rpcTimeoutMs: e.GATEWAY_RPC_TIMEOUT_MS,
    waitRecheckMs: e.GATEWAY_WAIT_RECHECK_MS,
    bodyLimitBytes: e.GATEWAY_BODY_LIMIT_BYTES,
    logLevel: e.GATEWAY_LOG_LEVEL,
    trustProxy: e.GATEWAY_TRUST_PROXY,
    consoleOrigins: e.GATEWAY_CONSOLE_ORIGINS,
    ...(e.GATEWAY_SERVICE_URL_BASE ? { serviceUrlBase: e.GATEWAY_SERVICE_URL_BASE } : {}),
  };
}

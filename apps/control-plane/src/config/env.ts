import { API_TOKEN_PATTERN } from '@paddock/contracts';
import { parseEnvironment, type EnvironmentResult } from '@paddock/kit';
import { z } from 'zod';

/**
 * The control plane's whole configuration, read from the environment once in `main.ts`
 * (12-factor). Nothing else reads `process.env`.
 */
export const EnvSchema = z.object({
  CONTROL_PLANE_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** 127.0.0.1 by default so a dev start is not exposed; containers set 0.0.0.0. */
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: z.string().url().default('postgres://postgres@127.0.0.1:5432/paddock'),
  NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
  /** Path of the control plane's own NATS credentials (`.creds`, mode 0600); unset = none. */
  NATS_CREDS: z.string().min(1).optional(),
  /**
   * Seed files (nkey, mode 0600) of the account's runner and controller signing keys. With them the
   * control plane issues runner credentials (to the runner's own cluster's controller, over NATS)
   * and controller credentials (to admins, over HTTP); it holds no other key of the account.
   */
  PADDOCK_NATS_RUNNER_SIGNING_KEY: z.string().min(1).optional(),
  PADDOCK_NATS_CONTROLLER_SIGNING_KEY: z.string().min(1).optional(),
  /** Lifetime of an issued runner user; its controller re-issues it before half of it is gone. */
  PADDOCK_NATS_RUNNER_CREDS_TTL_S: z.coerce.number().int().min(2).max(30 * 86_400).default(12 * 3600),
  /** Lifetime of an issued controller user (an admin re-issues it; the controller re-reads its file). */
  PADDOCK_NATS_CONTROLLER_CREDS_TTL_S: z.coerce.number().int().min(60).max(400 * 86_400).default(90 * 86_400),
  /**
   * When set, this exact token becomes the operator organization's admin token on first start
   * (stored hashed). When unset, a random one is generated and printed once.
   */
  PADDOCK_BOOTSTRAP_TOKEN: z
    .string()
    .regex(API_TOKEN_PATTERN, 'must look like pdk_<16..128 chars of [A-Za-z0-9_-]>')
    .optional(),
  /** If set, a generated bootstrap token is also written to this file (mode 0600). */
  PADDOCK_TOKEN_FILE: z.string().min(1).optional(),
  /**
   * The key secret-store values are encrypted under (AES-256-GCM): 32 bytes, base64. Unset =
   * secret stores refuse to hold values (`failed_precondition` naming this variable).
   */
  PADDOCK_SECRETS_KEY: z
    .string()
    .refine((k) => Buffer.from(k, /[-_]/.test(k) ? 'base64url' : 'base64').length === 32, 'must be 32 bytes, base64-encoded')
    .optional(),
  LOG_LEVEL: z.enum(['silent', 'fatal', 'error', 'warn', 'info', 'debug', 'trace']).default('info'),
  /**
   * HMAC key for list page tokens. Unset means a random key per process: page tokens then stop
   * working across restarts and across replicas, which is acceptable only in development.
   */
  PADDOCK_PAGE_TOKEN_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  /** How long a verified token is cached: the bound on how late a revocation takes effect. */
  PADDOCK_TOKEN_CACHE_TTL_MS: z.coerce.number().int().min(0).max(60_000).default(5_000),
  /** A runner with no heartbeat for this long is marked DISCONNECTED (the docs promise ≤ 30 s). */
  PADDOCK_HEARTBEAT_STALE_MS: z.coerce.number().int().min(1_000).max(30_000).default(15_000),
  PADDOCK_CONNECTION_SWEEP_MS: z.coerce.number().int().min(10).max(10_000).default(2_000),
  /** 0 disables the maintenance scheduler (tests that must not see automatic updates). */
  PADDOCK_MAINTENANCE_INTERVAL_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
  PADDOCK_DB_POOL_MAX: z.coerce.number().int().min(1).max(200).default(16),
  /** Where the built web console is (served at /console/); defaults to this checkout's apps/console/dist. */
  PADDOCK_CONSOLE_DIR: z.string().min(1).optional(),
  /** The gateway's URL as a browser reaches it: the console's data-plane calls go there. */
  PADDOCK_CONSOLE_GATEWAY_URL: z.string().url().default('http://127.0.0.1:8081'),
});
export type Env = z.infer<typeof EnvSchema>;

/** Parses the environment; on failure returns a readable multi-line message instead of throwing. */
export function parseEnv(source: Record<string, string | undefined>): EnvironmentResult<Env> {
  return parseEnvironment(EnvSchema, source, 'control-plane');
}

import { randomBytes } from 'node:crypto';
import { DEFAULT_CONSOLE_DIR } from '../infrastructure/http/console-assets';
import type { Env } from './env';

/** Typed configuration, injectable by class. Built from the parsed env (or directly in tests). */
export class AppConfig {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string;
  readonly natsUrl: string;
  readonly natsCredsFile: string | undefined;
  readonly natsRunnerSigningKeyFile: string | undefined;
  readonly natsControllerSigningKeyFile: string | undefined;
  readonly runnerCredsTtlS: number;
  readonly controllerCredsTtlS: number;
  readonly bootstrapToken: string | undefined;
  readonly tokenFile: string | undefined;
  readonly logLevel: Env['LOG_LEVEL'];
  /** Base64 of the secrets key; undefined = secret values cannot be stored. */
  readonly secretsKey: string | undefined;
  readonly pageTokenSecret: string;
  /** True when no PADDOCK_PAGE_TOKEN_SECRET was given and a per-process key was generated. */
  readonly pageTokenSecretGenerated: boolean;
  readonly tokenCacheTtlMs: number;
  readonly heartbeatStaleMs: number;
  readonly connectionSweepMs: number;
  readonly maintenanceIntervalMs: number;
  readonly dbPoolMax: number;
  readonly consoleDir: string;
  readonly consoleGatewayUrl: string;

  constructor(env: Env) {
    this.port = env.CONTROL_PLANE_PORT;
    this.host = env.HOST;
    this.databaseUrl = env.DATABASE_URL;
    this.natsUrl = env.NATS_URL;
    this.natsCredsFile = env.NATS_CREDS;
    this.natsRunnerSigningKeyFile = env.PADDOCK_NATS_RUNNER_SIGNING_KEY;
    this.natsControllerSigningKeyFile = env.PADDOCK_NATS_CONTROLLER_SIGNING_KEY;
    this.runnerCredsTtlS = env.PADDOCK_NATS_RUNNER_CREDS_TTL_S;
    this.controllerCredsTtlS = env.PADDOCK_NATS_CONTROLLER_CREDS_TTL_S;
    this.bootstrapToken = env.PADDOCK_BOOTSTRAP_TOKEN;
    this.tokenFile = env.PADDOCK_TOKEN_FILE;
    this.logLevel = env.LOG_LEVEL;
    this.secretsKey = env.PADDOCK_SECRETS_KEY;
    this.pageTokenSecretGenerated = env.PADDOCK_PAGE_TOKEN_SECRET === undefined;
    this.pageTokenSecret = env.PADDOCK_PAGE_TOKEN_SECRET ?? randomBytes(32).toString('base64url');
    this.tokenCacheTtlMs = env.PADDOCK_TOKEN_CACHE_TTL_MS;
    this.heartbeatStaleMs = env.PADDOCK_HEARTBEAT_STALE_MS;
    this.connectionSweepMs = env.PADDOCK_CONNECTION_SWEEP_MS;
    this.maintenanceIntervalMs = env.PADDOCK_MAINTENANCE_INTERVAL_MS;
    this.dbPoolMax = env.PADDOCK_DB_POOL_MAX;
    this.consoleDir = env.PADDOCK_CONSOLE_DIR ?? DEFAULT_CONSOLE_DIR;
    this.consoleGatewayUrl = env.PADDOCK_CONSOLE_GATEWAY_URL;
  }
}

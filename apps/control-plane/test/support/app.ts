import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { NatsConnection } from '@nats-io/transport-node';
import { Client } from 'pg';
import { inject } from 'vitest';
import { FixedClock, startNats, startPostgres, type ThrowawayNats, type ThrowawayPostgres } from '@paddock/testing';
import { AppConfig, parseEnv, type Env } from '../../src/config';
import { createControlPlane } from '../../src/control-plane';
import { SystemClock, type IdGenerator } from '../../src/infrastructure/tokens';
import { TokensService } from '../../src/modules/identity/tokens.service';
import type { Role } from '../../src/modules/identity/caller';

export interface TestAppOptions {
  /** 'fixed' (default): the app's Clock is the returned FixedClock, starting at real "now". */
  clock?: 'fixed' | 'system';
  /** Start of the FixedClock (default: the real current time). */
  startAt?: Date | string;
  /** Environment overrides, as strings, e.g. `{ PADDOCK_MAINTENANCE_INTERVAL_MS: '50' }`. */
  env?: Partial<Record<keyof Env, string>>;
  ids?: IdGenerator;
  /** Receives the app's log lines (with `env.LOG_LEVEL` other than silent). */
  logSink?: { write(line: string): void };
}

export interface TestApp {
  baseUrl: string;
  /** Admin token of the operator organization (registered through PADDOCK_BOOTSTRAP_TOKEN). */
  adminToken: string;
  /** The operator organization's id. */
  organizationId: string;
  /** A separate connection for the test to publish/subscribe with. */
  nats: NatsConnection;
  natsUrl: string;
  /** The file's NATS server (authentication on): credentials for other roles (runners, controllers). */
  natsServer: ThrowawayNats;
  databaseUrl: string;
  createToken(role: Role, organizationId?: string): Promise<string>;
  createOrganization(name: string): Promise<{ id: string; adminToken: string }>;
  registerCluster(token: string, cluster: { name: string; zone: string }): Promise<{ id: string }>;
  /** The app's clock when `clock: 'fixed'` (default); unused by the app with `clock: 'system'`. */
  clock: FixedClock;
  app: NestFastifyApplication;
  close(): Promise<void>;
}

/**
 * Databases come from the run's shared Postgres (vitest globalSetup: a migrated template cloned
 * per app) or, when a file runs without that setup, from a server of its own. NATS is always one
 * server per test file (process), shared by that file's apps.
 */
interface Servers {
  newDatabase(name: string): Promise<string>;
  nats: ThrowawayNats;
  stop(): Promise<void>;
}

let servers: Promise<Servers> | undefined;
let users = 0;
let dbCounter = 0;

async function cloneTemplate(adminUrl: string, template: string, name: string): Promise<string> {
  const c = new Client({ connectionString: adminUrl });
  await c.connect();
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await c.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
        break;
      } catch (e) {
        // 55006: the template is busy (another clone in progress); retry briefly.
        if ((e as { code?: string }).code !== '55006' || attempt > 50) throw e;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  } finally {
    await c.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function startServers(): Promise<Servers> {
  const shared = inject('paddockPostgres');
  const nats: ThrowawayNats = await startNats();
  if (shared) {
    return {
      newDatabase: (name) => cloneTemplate(shared.adminUrl, shared.template, name),
      nats,
      stop: () => nats.stop(),
    };
  }
  const pg: ThrowawayPostgres = await startPostgres();
  return {
    newDatabase: async (name) => pg.urlFor(name),
    nats,
    async stop() {
      await nats.stop();
      pg.stop();
    },
  };
}

async function acquireServers(): Promise<Servers> {
  users++;
  servers ??= startServers();
  return servers;
}

async function releaseServers(): Promise<void> {
  users--;
  if (users > 0 || !servers) return;
  const s = await servers;
  servers = undefined;
  await s.stop();
}

/** A fresh database URL on the test Postgres (migrated when the shared template is in use). */
export async function newTestDatabase(): Promise<{ url: string; release(): Promise<void> }> {
  const s = await acquireServers();
  return { url: await s.newDatabase(`cp_test_${process.pid}_${++dbCounter}`), release: releaseServers };
}

/**
 * Boots the real control plane (Fastify, real Postgres, real NATS) on a free port, in a fresh
 * database. Token cache TTL is 0 (revocation is immediate), the maintenance scheduler is off
 * unless `env.PADDOCK_MAINTENANCE_INTERVAL_MS` turns it on, the connection sweeper ticks every 50 ms.
 */
export async function startTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const shared = await acquireServers();
  let nc: NatsConnection | undefined;
  let app: NestFastifyApplication | undefined;
  try {
    const databaseUrl = await shared.newDatabase(`cp_test_${process.pid}_${++dbCounter}`);
    const adminToken = `pdk_${randomBytes(32).toString('base64url')}`;
    const parsed = parseEnv({
      CONTROL_PLANE_PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      ...(await shared.nats.env('control-plane')),
      PADDOCK_BOOTSTRAP_TOKEN: adminToken,
      LOG_LEVEL: process.env.PADDOCK_TEST_LOG_LEVEL ?? 'silent',
      PADDOCK_PAGE_TOKEN_SECRET: 'test-page-token-secret-0123456789',
      PADDOCK_TOKEN_CACHE_TTL_MS: '0',
      PADDOCK_CONNECTION_SWEEP_MS: '50',
      PADDOCK_MAINTENANCE_INTERVAL_MS: '0',
      PADDOCK_DB_POOL_MAX: '8',
      ...opts.env,
    });
    if (!parsed.ok) throw new Error(parsed.message);
    const config = new AppConfig(parsed.env);
    const clock = new FixedClock(opts.startAt ?? new Date());
    const cp = await createControlPlane({
      config,
      clock: opts.clock === 'system' ? new SystemClock() : clock,
      ...(opts.ids ? { ids: opts.ids } : {}),
      ...(opts.logSink ? { logSink: opts.logSink } : {}),
    });
    app = cp.app;
    await app.listen(config.port, config.host);
    const { port } = app.getHttpServer().address() as AddressInfo;
    const baseUrl = `http://127.0.0.1:${port}`;
    nc = await shared.nats.connectHarness({ name: 'control-plane-test' });
    const tokens = app.get(TokensService);
    const organizationId = cp.operatorOrganizationId;
    const testNats = nc;
    const testApp = app;
    let closed = false;
    return {
      baseUrl,
      adminToken,
      organizationId,
      nats: testNats,
      natsUrl: shared.nats.url,
      natsServer: shared.nats,
      databaseUrl,
      clock,
      app: testApp,
      async createToken(role, orgId) {
        return (await tokens.issue(orgId ?? organizationId, `test ${role.toLowerCase()}`, role)).token;
      },
      async createOrganization(name) {
        const { organization, adminToken: t } = await tokens.createOrganization(name);
        return { id: organization.id, adminToken: t.token };
      },
      async registerCluster(token, cluster) {
        const res = await fetch(`${baseUrl}/v1/clusters`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(cluster),
        });
        const body = (await res.json()) as { id?: string };
        if (res.status !== 200 || !body.id) throw new Error(`registerCluster failed: ${res.status} ${JSON.stringify(body)}`);
        return { id: body.id };
      },
      async close() {
        if (closed) return;
        closed = true;
        await testNats.drain().catch(() => undefined);
        await testApp.close();
        await releaseServers();
      },
    };
  } catch (e) {
    await nc?.drain().catch(() => undefined);
    await app?.close().catch(() => undefined);
    await releaseServers();
    throw e;
  }
}

/** What `api()` returns: the status, the parsed JSON body (`undefined` when empty or not JSON), the raw text and headers. */
export interface ApiResponse<T = unknown> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

/**
 * Authenticated JSON request against a test app; returns status, parsed body and headers.
 * `T` is the body type the caller expects for the status it asserts (a `@paddock/contracts`
 * response type, or `ErrorBody` from ./errors for a failure); the body is not validated here,
 * the test's assertions do that. Without `T` the body is `unknown`.
 */
export async function api<T = unknown>(
  t: { baseUrl: string },
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(`${t.baseUrl}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed as T, text, headers: res.headers };
}

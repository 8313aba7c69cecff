import type { NatsConnection } from '@nats-io/transport-node';
import type { ServiceLogger } from '@paddock/kit';
import { provisionGatewayRole, startNats, startPostgres, type ThrowawayNats, type ThrowawayPostgres } from '@paddock/testing';
import { createGateway, type RunningGateway } from '../../src/app';
import { parseGatewayEnv } from '../../src/config/env';
import { startControlPlane, type ControlPlane } from './control-plane';

export interface Infra {
  pg: ThrowawayPostgres;
  nats: ThrowawayNats;
  cp: ControlPlane;
  /** The database as its administrator (the test server's superuser): for fixtures no API makes. */
  adminUrl: string;
  /** The gateway's own role, as production runs it. */
  databaseUrl: string;
  stop(): Promise<void>;
}

/**
 * Private Postgres + NATS for one test file, the real control plane on them (its migrations, its
 * API for fixtures), and the gateway's database role made by the control plane's `db-access`.
 */
export async function startInfra(opts: { controlPlaneEnv?: Record<string, string> } = {}): Promise<Infra> {
  const [pg, nats] = await Promise.all([startPostgres(), startNats()]);
  const adminUrl = await pg.createDatabase('paddock');
  const cp = await startControlPlane(adminUrl, nats, opts.controlPlaneEnv);
  const databaseUrl = await provisionGatewayRole(adminUrl);
  return {
    pg,
    nats,
    cp,
    adminUrl,
    databaseUrl,
    async stop() {
      await cp.stop();
      await nats.stop();
      pg.stop();
    },
  };
}

export async function startGateway(infra: Infra, env: Record<string, string> = {}, log?: ServiceLogger): Promise<RunningGateway> {
  return createGateway(
    parseGatewayEnv({
      DATABASE_URL: infra.databaseUrl,
      ...(await infra.nats.env('gateway', 'gateway')),
      GATEWAY_PORT: '0',
      GATEWAY_GRPC_PORT: '0',
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_AUTH_CACHE_MS: '0',
      GATEWAY_RECONCILE_INTERVAL_MS: '500',
      GATEWAY_STUCK_AFTER_MS: '1000',
      GATEWAY_RUNNER_LOST_GRACE_MS: '3000',
      GATEWAY_RPC_TIMEOUT_MS: '3000',
      GATEWAY_LOG_LEVEL: 'error',
      ...env,
    }),
    log ? { log } : {},
  );
}

/** Counts every message sent to any runner (RPC or stream): proves what never reached one. */
export async function watchRunnerTraffic(nats: ThrowawayNats): Promise<{ count(): number; close(): Promise<void> }> {
  const nc: NatsConnection = await nats.connectHarness();
  let n = 0;
  nc.subscribe('rpc.runner.>', { callback: () => void n++ });
  nc.subscribe('stream.runner.>', { callback: () => void n++ });
  await nc.flush();
  return { count: () => n, close: () => nc.close() };
}

export interface HttpResult {
  status: number;
  text: string;
  json: unknown;
}

export async function http(baseUrl: string, method: string, path: string, token?: string, body?: unknown): Promise<HttpResult> {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: res.status, text, json };
}

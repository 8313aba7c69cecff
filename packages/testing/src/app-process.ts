import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeSecretFile } from '@paddock/nats';
import { waitFor } from './clock';
import type { ThrowawayNats } from './nats';
import { freePort } from './ports';

/** The repository root (this file lives in packages/testing/src or packages/testing/dist). */
export const REPO_ROOT = resolve(__dirname, '..', '..', '..');

/**
 * Builds the given workspace packages and their dependencies with turbo, as CI does before tests
 * that run compiled apps. Skipped when CI already built them (turbo `dependsOn`).
 */
export function buildPackages(filters: string[], entries: string[]): void {
  if (process.env.CI && entries.every((e) => existsSync(e))) return;
  const r = spawnSync('pnpm', ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only', ...filters.map((f) => `--filter=${f}...`)], {
    cwd: REPO_ROOT,
    stdio: 'inherit',
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' },
  });
  if (r.status !== 0) throw new Error(`build of ${filters.join(', ')} failed`);
}

export interface AppProcess {
  url: string;
  port: number;
  child: ChildProcess;
  /** What the process wrote to stderr so far (for failure messages). */
  stderr(): string;
  /** Everything the process wrote to stdout (its log lines), up to the last 16 MB. */
  stdout(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts a compiled app (`node dist/main.js`) on a free port and waits for its /readyz. */
export async function startAppProcess(opts: { entry: string; env: NodeJS.ProcessEnv; portVar: string; port?: number; readyPath?: string; timeoutMs?: number }): Promise<AppProcess> {
  // A fixed port lets a test restart an app where its clients expect it (outage journeys).
  const port = opts.port ?? (await freePort());
  const child = spawn(process.execPath, [opts.entry], {
    env: { ...process.env, ...opts.env, [opts.portVar]: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out = (out + d.toString()).slice(-16_000_000);
  });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => {
    err = (err + d.toString()).slice(-20_000);
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`${opts.entry} exited with ${child.exitCode}: ${err}`);
      const r = await fetch(`${url}${opts.readyPath ?? '/readyz'}`).catch(() => undefined);
      return r?.ok;
    },
    { timeoutMs: opts.timeoutMs ?? 90_000, what: `${opts.entry} ready` },
  );
  return {
    url,
    port,
    child,
    stderr: () => err,
    stdout: () => out,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      await waitFor(() => child.exitCode !== null || child.signalCode !== null, { timeoutMs: 15_000, what: 'app exit' }).catch(() => child.kill('SIGKILL'));
    },
  };
}

export const CONTROL_PLANE_ENTRY = join(REPO_ROOT, 'apps', 'control-plane', 'dist', 'main.js');

/** The compiled control plane on a free port with a known bootstrap admin token. */
export async function startControlPlaneProcess(opts: { databaseUrl: string; nats: ThrowawayNats; token?: string; port?: number; env?: NodeJS.ProcessEnv }): Promise<AppProcess & { token: string }> {
  const token = opts.token ?? `pdk_${Buffer.from(`test-${process.pid}-${Date.now()}-${Math.random()}`).toString('base64url')}`;
  const app = await startAppProcess({
    entry: CONTROL_PLANE_ENTRY,
    portVar: 'CONTROL_PLANE_PORT',
    port: opts.port,
    env: { DATABASE_URL: opts.databaseUrl, ...(await opts.nats.env('control-plane')), PADDOCK_BOOTSTRAP_TOKEN: token, LOG_LEVEL: 'warn', ...opts.env },
  });
  return { ...app, token };
}

/**
 * What a cluster's controller needs before it starts, as an admin gets it: the cluster registered
 * (idempotent by name) and its controller's NATS credentials issued by the control plane, written
 * to a 0600 file in `dir`. Without authentication (`nats.auth` false) there is no file.
 */
export async function controllerNatsEnv(
  cp: { url: string; token: string },
  nats: ThrowawayNats,
  cluster: { name: string; zone: string },
  dir: string,
): Promise<{ clusterId: string; env: Record<string, string> }> {
  const registered = await httpJson<{ id: string }>(cp.url, 'POST', '/v1/clusters', cp.token, cluster);
  if (registered.status !== 200) throw new Error(`registering cluster ${cluster.name}: ${registered.status} ${JSON.stringify(registered.json)}`);
  const clusterId = registered.json.id;
  if (!nats.auth) return { clusterId, env: { NATS_URL: nats.url } };
  const issued = await httpJson<{ creds: string }>(cp.url, 'POST', `/v1/clusters/${clusterId}/natsCredentials`, cp.token);
  if (issued.status !== 200) throw new Error(`controller credentials of ${cluster.name}: ${issued.status} ${JSON.stringify(issued.json)}`);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `controller-${cluster.name}.creds`);
  writeSecretFile(file, issued.json.creds);
  return { clusterId, env: { NATS_URL: nats.url, NATS_CREDS: file } };
}

/** A tiny JSON HTTP client for black-box tests. */
export async function httpJson<T = unknown>(baseUrl: string, method: string, path: string, token: string, body?: unknown): Promise<{ status: number; json: T }> {
  const r = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  let json: unknown = undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = { raw: text };
  }
  return { status: r.status, json: json as T };
}

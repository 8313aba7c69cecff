import { chmodSync, existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CONTROL_PLANE_ENTRY,
  REPO_ROOT,
  buildPackages,
  controllerNatsEnv,
  httpJson,
  processAlive,
  provisionControllerRole,
  removeStateDir,
  startControlPlaneProcess,
  startNats,
  startPostgres,
  waitFor,
  type AppProcess,
  type ThrowawayNats,
  type ThrowawayPostgres,
} from '@paddock/testing';
import { credsInfo } from '@paddock/nats';
import { RunnerConfigFileSchema } from '@paddock/contracts';
import { parseEnv } from '../src/config';
import { startController, type ControllerHandle } from '../src/controller';

/**
 * The embedded default: the same reconcile code with the local driver, deploying the REAL runner
 * as a child process of this machine. Declared through the control plane API, deployed by the
 * controller, READY and CONNECTED from real heartbeats; a policy edit rewrites its config file, an
 * update restarts it at the new revision, delete stops it and removes everything. NATS runs with
 * authentication: the runner's user is issued by the control plane to this cluster's controller,
 * lives 8 s (so rotation happens throughout), and reaches the runner as a 0600 file.
 */
const RUNNER_CREDS_TTL_S = 8;
const RUNNER_ENTRY = join(REPO_ROOT, 'apps', 'runner', 'dist', 'main.js');

interface Runner {
  installStatus: string;
  connectionStatus: string;
  activeRevision: string;
  targetRevision: string;
  rolloutInProgress: boolean;
  etag: string;
  warmPoolStatus?: { name: string; size: number; ready: number }[];
}

describe('controller with the local driver and the real runner', () => {
  let pg: ThrowawayPostgres;
  let nats: ThrowawayNats;
  let cp: AppProcess & { token: string };
  let controller: ControllerHandle;
  let controllerEnv: ReturnType<typeof parseEnv>;
  let stateDir: string;
  const api = <T>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> => httpJson<T>(cp.url, method, path, cp.token, body);
  const runner = async (): Promise<Runner> => (await api<Runner>('GET', '/v1/sandbox/managedRunners/local-a')).json;
  const pidOf = (): number => (JSON.parse(readFileSync(join(stateDir, 'runners', 'local-a', 'process.json'), 'utf8')) as { pid: number }).pid;

  beforeAll(async () => {
    buildPackages(['@paddock/control-plane', '@paddock/runner'], [CONTROL_PLANE_ENTRY, RUNNER_ENTRY]);
    pg = await startPostgres();
    nats = await startNats();
    const databaseUrl = await pg.createDatabase('paddock');
    cp = await startControlPlaneProcess({ databaseUrl, nats, env: { PADDOCK_MAINTENANCE_INTERVAL_MS: '0', PADDOCK_NATS_RUNNER_CREDS_TTL_S: String(RUNNER_CREDS_TTL_S) } });
    stateDir = mkdtempSync(join(tmpdir(), 'paddock-controller-'));
    const { env: natsEnv } = await controllerNatsEnv(cp, nats, { name: 'local', zone: 'local' }, join(stateDir, 'controller-creds'));
    controllerEnv = parseEnv({
      // The controller's own role: its cluster's rows only, no writes.
      DATABASE_URL: await provisionControllerRole(databaseUrl, 'local'),
      ...natsEnv,
      PADDOCK_CONTROL_PLANE_URL: cp.url,
      PADDOCK_API_KEY: cp.token,
      PADDOCK_CONTROLLER_DRIVER: 'local',
      PADDOCK_CLUSTER_NAME: 'local',
      PADDOCK_ZONE: 'local',
      PADDOCK_CONTROLLER_STATE_DIR: stateDir,
      PADDOCK_RUNNER_ENTRY: RUNNER_ENTRY,
      PADDOCK_RESYNC_MS: '1000',
    });
    controller = await startController(controllerEnv, { log: () => undefined });
  }, 300_000);

  afterAll(async () => {
    await controller?.stop();
    await cp?.stop();
    await nats?.stop();
    pg?.stop();
    if (stateDir) await removeStateDir(stateDir);
  });

  it('create → the controller starts the runner → READY and CONNECTED from its heartbeats', async () => {
    const created = await api('POST', '/v1/sandbox/managedRunners', { identity: { runnerId: 'local-a', zone: 'local', clusterName: 'local' }, policy: {} });
    expect(created.status).toBe(200);
    await waitFor(
      async () => {
        const r = await runner();
        return r.installStatus === 'RUNNER_INSTALL_STATUS_READY' && r.connectionStatus === 'RUNNER_CONNECTION_STATUS_CONNECTED';
      },
      { timeoutMs: 90_000, what: 'READY and CONNECTED' },
    );
    const r = await runner();
    expect(r.activeRevision).toBe(r.targetRevision);
    expect(processAlive(pidOf())).toBe(true);
  });

  it('a controller restarted on its own adopts the runner it left running (only the platform stop stops runners)', async () => {
    const pid = pidOf();
    await controller.stop();
    expect(processAlive(pid)).toBe(true);
    controller = await startController(controllerEnv, { log: () => undefined });
    await controller.resync();
    const r = await runner();
    expect([r.installStatus, r.connectionStatus]).toEqual(['RUNNER_INSTALL_STATUS_READY', 'RUNNER_CONNECTION_STATUS_CONNECTED']);
    expect(pidOf()).toBe(pid);
    expect(processAlive(pid)).toBe(true);
  });

  it('the runner gets no platform secret: its environment is an allow-list, its identity and NATS user in 0600 files', async () => {
    const environ = readFileSync(`/proc/${pidOf()}/environ`, 'utf8').split('\0').filter(Boolean);
    const names = environ.map((kv) => kv.slice(0, kv.indexOf('=')));
    const credsFile = join(stateDir, 'runners', 'local-a', 'nats.creds');
    const configFile = join(stateDir, 'runners', 'local-a', 'config.json');
    for (const name of ['PADDOCK_API_KEY', 'PADDOCK_BOOTSTRAP_TOKEN', 'DATABASE_URL', 'PADDOCK_CONTROL_PLANE_URL', 'NATS_URL', 'NATS_CREDS']) expect(names).not.toContain(name);
    // Written by the driver, read by the runner: one schema.
    const config = RunnerConfigFileSchema.parse(JSON.parse(readFileSync(configFile, 'utf8')));
    expect(config).toMatchObject({ runnerId: 'local-a', identity: { zone: 'local' }, nats: { credsFile } });
    expect((statSync(configFile).mode & 0o777).toString(8)).toBe('600');
    const creds = readFileSync(credsFile, 'utf8');
    const jwt = credsInfo(creds).jwt;
    for (const kv of environ) {
      expect(kv).not.toContain(cp.token);
      expect(kv).not.toContain(jwt);
    }
    expect((statSync(credsFile).mode & 0o777).toString(8)).toBe('600');
    expect(credsInfo(creds)).toMatchObject({ name: 'local-a', role: 'runner' });
  });

  it('rotation: the runner’s user is re-issued before it expires and the runner stays connected past the expiry', async () => {
    const credsFile = join(stateDir, 'runners', 'local-a', 'nats.creds');
    const first = credsInfo(readFileSync(credsFile, 'utf8'));
    const firstExpiry = first.expiresAt?.getTime() ?? 0;
    const renewed = await waitFor(
      () => {
        const now = credsInfo(readFileSync(credsFile, 'utf8'));
        return now.jwt !== first.jwt ? now : undefined;
      },
      { timeoutMs: RUNNER_CREDS_TTL_S * 1000, what: 'credentials re-issued' },
    );
    expect(Date.now()).toBeLessThan(firstExpiry);
    expect(renewed.expiresAt?.getTime() ?? 0).toBeGreaterThan(firstExpiry);
    // A heartbeat received after the first user expired can only come over the rotated one.
    await waitFor(
      async () => {
        const r = await api<{ lastHeartbeatTime?: string }>('GET', '/v1/sandbox/managedRunners/local-a');
        return new Date(r.json.lastHeartbeatTime ?? 0).getTime() > firstExpiry + 1000;
      },
      { timeoutMs: 30_000, what: 'a heartbeat after the first credentials expired' },
    );
    expect((await runner()).connectionStatus).toBe('RUNNER_CONNECTION_STATUS_CONNECTED');
  }, 60_000);

  it('a policy edit rewrites the runner config file without restarting the runner', async () => {
    const pid = pidOf();
    const r = await runner();
    const p = await api('PATCH', '/v1/sandbox/managedRunners/local-a?updateMask=policy', { policy: { constraints: { resources: { maxCpu: '2' } } }, etag: r.etag });
    expect(p.status).toBe(200);
    await waitFor(() => readFileSync(join(stateDir, 'runners', 'local-a', 'config.json'), 'utf8').includes('"maxCpu": "2"'), { timeoutMs: 30_000, what: 'config file' });
    expect(pidOf()).toBe(pid);
  });

  it('spec.warmPools reaches the runner through its config file, and the pool it fills shows on the runner resource', async () => {
    const pid = pidOf();
    // This scenario's directories are private to root (mkdtemp); a sandbox's unprivileged user must
    // traverse them to reach its own workspace, so they open to traversal (not listing) meanwhile.
    const dirs = [stateDir, join(stateDir, 'runners'), join(stateDir, 'runners', 'local-a')];
    const modes = dirs.map((d) => statSync(d).mode & 0o777);
    for (const d of dirs) chmodSync(d, 0o711);
    const template = { containers: [{ name: 'main', resources: { cpu: '100m', memory: '64Mi' } }], network: { denyEgress: true } };
    let last: Runner['warmPoolStatus'];
    const p = await api('PATCH', '/v1/sandbox/managedRunners/local-a?updateMask=spec.warm_pools', { spec: { warmPools: [{ name: 'agents', size: 2, template }] } });
    expect(p.status).toBe(200);
    await waitFor(() => readFileSync(join(stateDir, 'runners', 'local-a', 'config.json'), 'utf8').includes('"warmPools"'), { timeoutMs: 30_000, what: 'warm pools in the config file' });
    const filled = await waitFor(
      async () => {
        const r = await runner();
        last = r.warmPoolStatus;
        return r.warmPoolStatus?.[0]?.ready === 2 ? r : undefined;
      },
      { timeoutMs: 60_000, what: 'the pool reported full on the runner resource' },
    ).catch((e: unknown) => {
      throw new Error(`${String(e)}; last reported: ${JSON.stringify(last)}`);
    });
    expect(filled.warmPoolStatus?.[0]).toMatchObject({ name: 'agents', size: 2, ready: 2 });
    expect(pidOf()).toBe(pid);
    // Removing the pool drains it: the runner reports no pool any more.
    expect((await api('PATCH', '/v1/sandbox/managedRunners/local-a?updateMask=spec.warm_pools', { spec: {} })).status).toBe(200);
    await waitFor(async () => ((await runner()).warmPoolStatus ?? []).length === 0, { timeoutMs: 60_000, what: 'the pool gone from the runner resource' });
    dirs.forEach((d, i) => chmodSync(d, modes[i] as number));
  }, 120_000);

  it(':applyAvailableUpdate → the runner restarts at the new revision; activeRevision == targetRevision', async () => {
    const before = pidOf();
    expect((await api('POST', '/v1/sandbox/releases', { channel: 'RELEASE_CHANNEL_STABLE', version: '9.9.9', image: 'paddock/runner:9.9.9' })).status).toBe(200);
    expect((await api('POST', '/v1/sandbox/managedRunners/local-a:applyAvailableUpdate', {})).status).toBe(200);
    await waitFor(
      async () => {
        const r = await runner();
        return r.activeRevision === r.targetRevision && !r.rolloutInProgress && r.installStatus === 'RUNNER_INSTALL_STATUS_READY';
      },
      { timeoutMs: 90_000, what: 'rollout' },
    );
    expect(pidOf()).not.toBe(before);
    expect(processAlive(before)).toBe(false);
  });

  it('delete → runner stopped, its state removed, and the runner gone from the control plane', async () => {
    const pid = pidOf();
    expect((await api('DELETE', '/v1/sandbox/managedRunners/local-a')).status).toBeLessThan(300);
    await waitFor(async () => (await api('GET', '/v1/sandbox/managedRunners/local-a')).status === 404, { timeoutMs: 90_000, what: 'runner gone' });
    expect(processAlive(pid)).toBe(false);
    expect(existsSync(join(stateDir, 'runners', 'local-a'))).toBe(false);
  }, 120_000);
});

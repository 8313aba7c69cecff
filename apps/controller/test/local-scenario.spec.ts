import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CONTROL_PLANE_ENTRY,
  REPO_ROOT,
  buildPackages,
  httpJson,
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
import { parseEnv } from '../src/config';
import { startController, type ControllerHandle } from '../src/controller';

/**
 * The embedded default: the same reconcile code with the local driver, deploying the REAL runner
 * as a child process of this machine. Declared through the control plane API, deployed by the
 * controller, READY and CONNECTED from real heartbeats; a policy edit rewrites its config file, an
 * update restarts it at the new revision, delete stops it and removes everything.
 */
const RUNNER_ENTRY = join(REPO_ROOT, 'apps', 'runner', 'dist', 'main.js');

interface Runner {
  installStatus: string;
  connectionStatus: string;
  activeRevision: string;
  targetRevision: string;
  rolloutInProgress: boolean;
  etag: string;
}

describe('controller with the local driver and the real runner', () => {
  let pg: ThrowawayPostgres;
  let nats: ThrowawayNats;
  let cp: AppProcess & { token: string };
  let controller: ControllerHandle;
  let stateDir: string;
  const api = <T>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> => httpJson<T>(cp.url, method, path, cp.token, body);
  const runner = async (): Promise<Runner> => (await api<Runner>('GET', '/v1/sandbox/managedRunners/local-a')).json;
  const pidOf = (): number => (JSON.parse(readFileSync(join(stateDir, 'runners', 'local-a', 'process.json'), 'utf8')) as { pid: number }).pid;
  const alive = (pid: number): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  beforeAll(async () => {
    buildPackages(['@paddock/control-plane', '@paddock/runner'], [CONTROL_PLANE_ENTRY, RUNNER_ENTRY]);
    pg = await startPostgres();
    nats = await startNats();
    const databaseUrl = await pg.createDatabase('paddock');
    cp = await startControlPlaneProcess({ databaseUrl, natsUrl: nats.url, env: { PADDOCK_MAINTENANCE_INTERVAL_MS: '0' } });
    stateDir = mkdtempSync(join(tmpdir(), 'paddock-controller-'));
    const env = parseEnv({
      // The controller's own role: its cluster's rows only, no writes.
      DATABASE_URL: await provisionControllerRole(databaseUrl, 'local'),
      NATS_URL: nats.url,
      PADDOCK_CONTROL_PLANE_URL: cp.url,
      PADDOCK_API_KEY: cp.token,
      PADDOCK_CONTROLLER_DRIVER: 'local',
      PADDOCK_CLUSTER_NAME: 'local',
      PADDOCK_ZONE: 'local',
      PADDOCK_CONTROLLER_STATE_DIR: stateDir,
      PADDOCK_RUNNER_ENTRY: RUNNER_ENTRY,
      PADDOCK_RESYNC_MS: '1000',
    });
    controller = await startController(env, { log: () => undefined });
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
    expect(alive(pidOf())).toBe(true);
  });

  it('a policy edit rewrites the runner config file without restarting the runner', async () => {
    const pid = pidOf();
    const r = await runner();
    const p = await api('PATCH', '/v1/sandbox/managedRunners/local-a?updateMask=policy', { policy: { constraints: { resources: { maxCpu: '2' } } }, etag: r.etag });
    expect(p.status).toBe(200);
    await waitFor(() => readFileSync(join(stateDir, 'runners', 'local-a', 'config.json'), 'utf8').includes('"maxCpu": "2"'), { timeoutMs: 30_000, what: 'config file' });
    expect(pidOf()).toBe(pid);
  });

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
    expect(alive(before)).toBe(false);
  });

  it('delete → runner stopped, its state removed, and the runner gone from the control plane', async () => {
    const pid = pidOf();
    expect((await api('DELETE', '/v1/sandbox/managedRunners/local-a')).status).toBeLessThan(300);
    await waitFor(async () => (await api('GET', '/v1/sandbox/managedRunners/local-a')).status === 404, { timeoutMs: 90_000, what: 'runner gone' });
    expect(alive(pid)).toBe(false);
    expect(existsSync(join(stateDir, 'runners', 'local-a'))).toBe(false);
  }, 120_000);
});

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubernetesObjectApi, PatchStrategy } from '@kubernetes/client-node';
import { startK8sTestServer } from '@paddock/k8s-testserver';
import {
  CONTROL_PLANE_ENTRY,
  REPO_ROOT,
  buildPackages,
  controllerNatsEnv,
  httpJson,
  latencyStats,
  provisionControllerRole,
  report,
  row,
  startControlPlaneProcess,
  startNats,
  startPostgres,
  timeSequential,
  type BenchRow,
} from '@paddock/testing';
import { Client } from 'pg';
import { parseEnv } from '../src/config';
import { startController } from '../src/controller';

/**
 * Controller figures beside floors measured in the same run:
 * - policy edit (PATCH through the control plane) → runner ConfigMap updated on the test server;
 * - runner create → RUNNER_INSTALL_STATUS_READY on the test server and with the local driver;
 * floors: a bare NATS request/reply, a bare Postgres commit and one bare SSA patch.
 */
const N_EDITS = Number(process.env.BENCH_EDITS ?? 40);
const N_CREATES = Number(process.env.BENCH_CREATES ?? 5);
const RUNNER_ENTRY = join(REPO_ROOT, 'apps', 'runner', 'dist', 'main.js');

async function until(pred: () => boolean | Promise<boolean>, timeoutMs: number): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    if (await pred()) return performance.now() - t0;
    if (performance.now() - t0 > timeoutMs) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 2));
  }
}

async function main(): Promise<void> {
  buildPackages(['@paddock/control-plane'], [CONTROL_PLANE_ENTRY]);
  let runnerBuilt = false;
  try {
    buildPackages(['@paddock/runner'], [RUNNER_ENTRY]);
    runnerBuilt = existsSync(RUNNER_ENTRY);
  } catch {
    runnerBuilt = false;
  }
  const pg = await startPostgres();
  const nats = await startNats();
  const databaseUrl = await pg.createDatabase('paddock');
  const cp = await startControlPlaneProcess({ databaseUrl, nats, env: { PADDOCK_MAINTENANCE_INTERVAL_MS: '0' } });
  const k8s = await startK8sTestServer({ nodes: [{ name: 'node-1' }] });
  const kc = k8s.kubeConfig();
  await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: 'paddock-system' } } });
  const api = <T>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> => httpJson<T>(cp.url, method, path, cp.token, body);
  const stateDir = mkdtempSync(join(tmpdir(), 'paddock-controller-bench-'));
  const stops: (() => Promise<void>)[] = [];
  try {
    // Floors.
    const nc = await nats.connectHarness();
    nc.subscribe('bench.echo', {
      callback: (_e, m) => {
        m.respond(m.data);
      },
    });
    const natsRr = latencyStats(await timeSequential(() => nc.request('bench.echo', 'x', { timeout: 2_000 }), 300));
    const client = new Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query('create table bench_floor (id serial primary key, v text)');
    const pgCommit = latencyStats(await timeSequential(() => client.query("insert into bench_floor (v) values ('x')"), 300));
    const objects = KubernetesObjectApi.makeApiClient(kc);
    let i = 0;
    const ssa = latencyStats(
      await timeSequential(
        () => objects.patch({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'floor', namespace: 'default' }, data: { v: String(i++) } }, undefined, undefined, 'bench', true, PatchStrategy.ServerSideApply),
        200,
      ),
    );
    const floorSum = natsRr.p50 + pgCommit.p50 + ssa.p50;

    // Kubernetes driver.
    const env = parseEnv({
      DATABASE_URL: await provisionControllerRole(databaseUrl, 'bench-k8s'),
      ...(await controllerNatsEnv(cp, nats, { name: 'bench-k8s', zone: 'us-east-1' }, join(stateDir, 'creds'))).env,
      PADDOCK_CONTROL_PLANE_URL: cp.url,
      PADDOCK_API_KEY: cp.token,
      PADDOCK_CONTROLLER_DRIVER: 'kubernetes',
      PADDOCK_CLUSTER_NAME: 'bench-k8s',
      PADDOCK_ZONE: 'us-east-1',
      PADDOCK_CONTROLLER_ID: 'bench-k8s',
    });
    const k8sController = await startController(env, { kubeConfig: kc, log: () => undefined });
    stops.push(() => k8sController.stop());
    const status = async (id: string): Promise<string> => (await api<{ installStatus: string }>('GET', `/v1/sandbox/managedRunners/${id}`)).json.installStatus;
    const createToReady = async (id: string, cluster: string, timeoutMs: number): Promise<number> => {
      const t0 = performance.now();
      const r = await api('POST', '/v1/sandbox/managedRunners', { identity: { runnerId: id, zone: cluster === 'bench-k8s' ? 'us-east-1' : 'local', clusterName: cluster }, policy: {} });
      if (r.status !== 200) throw new Error(`create ${id}: ${r.status} ${JSON.stringify(r.json)}`);
      await until(async () => (await status(id)) === 'RUNNER_INSTALL_STATUS_READY', timeoutMs);
      return performance.now() - t0;
    };
    const deleteToGone = async (id: string, timeoutMs: number): Promise<number> => {
      const t0 = performance.now();
      const r = await api('DELETE', `/v1/sandbox/managedRunners/${id}`);
      if (r.status >= 300) throw new Error(`delete ${id}: ${r.status} ${JSON.stringify(r.json)}`);
      await until(async () => (await api('GET', `/v1/sandbox/managedRunners/${id}`)).status === 404, timeoutMs);
      return performance.now() - t0;
    };
    // One managed runner per cluster (control-plane rule): each measured create follows the
    // teardown of the previous runner of the cluster (DELETE → 404), and the last one stays for
    // the policy edits.
    const k8sReady: number[] = [];
    const k8sGone: number[] = [];
    for (let n = 0; n < N_CREATES; n++) {
      k8sReady.push(await createToReady(`bench-k${n}`, 'bench-k8s', 60_000));
      if (n < N_CREATES - 1) k8sGone.push(await deleteToGone(`bench-k${n}`, 60_000));
    }
    const editRunner = `bench-k${N_CREATES - 1}`;
    const cmData = (): string => (k8s.get('v1', 'ConfigMap', `runner-${editRunner}-config`, `paddock-runner-${editRunner}`) as { data?: Record<string, string> } | undefined)?.data?.['runner.json'] ?? '';
    const edits: number[] = [];
    for (let n = 0; n < N_EDITS; n++) {
      const cur = await api<{ etag: string }>('GET', `/v1/sandbox/managedRunners/${editRunner}`);
      const maxCpu = String(100 + n);
      const t0 = performance.now();
      const r = await api('PATCH', `/v1/sandbox/managedRunners/${editRunner}?updateMask=policy`, { policy: { constraints: { resources: { maxCpu } } }, etag: cur.json.etag });
      if (r.status !== 200) throw new Error(`policy edit: ${r.status}`);
      await until(() => cmData().includes(`"maxCpu": "${maxCpu}"`), 30_000);
      edits.push(performance.now() - t0);
    }
    const editStats = latencyStats(edits);
    const rows: BenchRow[] = [
      row('floor: bare NATS request/reply p50', 'ms', [natsRr.p50]),
      row('floor: bare Postgres commit p50', 'ms', [pgCommit.p50]),
      row('floor: bare SSA patch (test server) p50', 'ms', [ssa.p50]),
      row('policy edit → ConfigMap updated p50', 'ms', [editStats.p50], { floor: { name: 'NATS rr + PG commit + SSA patch', median: floorSum }, target: '< 200 ms', note: `n=${editStats.n}` }),
      row('policy edit → ConfigMap updated p99', 'ms', [editStats.p99], { floor: { name: 'NATS rr + PG commit + SSA patch', median: floorSum }, note: `n=${editStats.n}` }),
      row('runner create → READY (test server)', 'ms', k8sReady, { floor: { name: 'bare SSA patch', median: ssa.p50 }, note: `n=${k8sReady.length}` }),
      row('runner delete → gone (test server)', 'ms', k8sGone, { note: `n=${k8sGone.length}` }),
    ];

    // Local driver with the real runner process.
    if (runnerBuilt) {
      const local = await startController(
        parseEnv({
          DATABASE_URL: await provisionControllerRole(databaseUrl, 'bench-local'),
          ...(await controllerNatsEnv(cp, nats, { name: 'bench-local', zone: 'local' }, join(stateDir, 'creds'))).env,
          PADDOCK_CONTROL_PLANE_URL: cp.url,
          PADDOCK_API_KEY: cp.token,
          PADDOCK_CONTROLLER_DRIVER: 'local',
          PADDOCK_CLUSTER_NAME: 'bench-local',
          PADDOCK_ZONE: 'local',
          PADDOCK_CONTROLLER_STATE_DIR: stateDir,
          PADDOCK_RUNNER_ENTRY: RUNNER_ENTRY,
        }),
        { log: () => undefined },
      );
      stops.push(() => local.stop());
      const localReady: number[] = [];
      const nLocal = Math.min(3, N_CREATES);
      let live: string | undefined;
      try {
        for (let n = 0; n < nLocal; n++) {
          live = `bench-l${n}`;
          localReady.push(await createToReady(live, 'bench-local', 90_000));
          await deleteToGone(live, 60_000);
          live = undefined;
        }
        rows.push(row('runner create → READY (local driver, real runner)', 'ms', localReady, { floor: { name: 'bare NATS request/reply', median: natsRr.p50 }, note: `n=${localReady.length}` }));
      } catch (e) {
        rows.push(row('runner create → READY (local driver)', 'ms', [Number.NaN], { note: `failed: ${e instanceof Error ? e.message : String(e)}` }));
      }
      // Leave no runner process behind.
      if (live) await api('DELETE', `/v1/sandbox/managedRunners/${live}`);
    } else {
      rows.push(row('runner create → READY (local driver)', 'ms', [Number.NaN], { note: 'apps/runner does not build: skipped' }));
    }
    report('controller', rows);
    await client.end();
    await nc.drain();
  } finally {
    for (const s of stops.reverse()) await s().catch(() => undefined);
    await k8s.close();
    await cp.stop();
    await nats.stop();
    pg.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);

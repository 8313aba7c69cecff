/**
 * Control-plane benchmark, one run, every figure beside a floor measured in the same run:
 * - GET /v1/sandbox/managedRunners/{id} latency (sequential, keep-alive) vs a bare indexed
 *   SELECT by primary key over the app's own pool;
 * - policy PATCH throughput (8 clients, each on its own runner with its current etag) vs the bare
 *   single-row commit rate of 8 connections.
 * The app runs from `dist/` (tsc output: Nest needs decorator metadata, which tsx does not
 * emit); workspace packages load from source through the @paddock/source condition.
 *
 *   pnpm bench        (builds first; PADDOCK_BENCH_SECONDS / PADDOCK_BENCH_RUNS to scale)
 */
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { Client } from 'pg';
import { latencyStats, report, row, startNats, startPostgres, timeSequential, type BenchRow } from '@paddock/testing';
import type * as ControlPlaneModule from '../src/control-plane';
import type * as ConfigModule from '../src/config';
import type * as TokensModule from '../src/infrastructure/tokens';
import type * as QueriesModule from '../src/modules/runners/application/runner-queries';
import type * as ReadRepoModule from '../src/modules/runners/projections/runner-read.repository';
import { startBarePartsServer } from './bare-parts';

const SECONDS = Number(process.env.PADDOCK_BENCH_SECONDS ?? 4);
const RUNS = Number(process.env.PADDOCK_BENCH_RUNS ?? 3);
const GET_SAMPLES = Number(process.env.PADDOCK_BENCH_GETS ?? 2000);
const CLIENTS = 8;

interface HttpResult { status: number; body: string }

function makeClient(port: number, token: string, maxSockets: number) {
  const agent = new Agent({ keepAlive: true, maxSockets });
  return (method: string, path: string, body?: unknown): Promise<HttpResult> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        {
          host: '127.0.0.1', port, method, path, agent,
          headers: { authorization: `Bearer ${token}`, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        },
      );
      req.on('error', reject);
      if (payload) req.write(payload);
      req.end();
    });
}

async function forSeconds(seconds: number, workers: number, step: (worker: number) => Promise<void>): Promise<number> {
  const deadline = Date.now() + seconds * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      while (Date.now() < deadline) {
        await step(w);
        done++;
      }
    }),
  );
  return done / seconds;
}

async function main(): Promise<void> {
  const dist = join(__dirname, '..', 'dist');
  const { createControlPlane } = (await import(join(dist, 'control-plane.js'))) as typeof ControlPlaneModule;
  const { AppConfig, parseEnv } = (await import(join(dist, 'config', 'index.js'))) as typeof ConfigModule;
  const { KYSELY } = (await import(join(dist, 'infrastructure', 'tokens.js'))) as typeof TokensModule;
  const { RunnerQueries } = (await import(join(dist, 'modules', 'runners', 'application', 'runner-queries.js'))) as typeof QueriesModule;
  const { RunnerReadRepository } = (await import(join(dist, 'modules', 'runners', 'projections', 'runner-read.repository.js'))) as typeof ReadRepoModule;

  const pg = await startPostgres({ settings: { fsync: 'on', full_page_writes: 'on' } });
  const nats = await startNats();
  const adminToken = `pdk_${randomBytes(32).toString('base64url')}`;
  const parsed = parseEnv({
    CONTROL_PLANE_PORT: '0',
    DATABASE_URL: pg.urlFor('paddock_bench'),
    // The control plane's own NATS user: the bench's server has authentication on, as every
    // installation does.
    ...(await nats.env('control-plane')),
    PADDOCK_BOOTSTRAP_TOKEN: adminToken,
    LOG_LEVEL: 'error',
    PADDOCK_MAINTENANCE_INTERVAL_MS: '0',
    PADDOCK_DB_POOL_MAX: '16',
  });
  if (!parsed.ok) throw new Error(parsed.message);
  const config = new AppConfig(parsed.env);
  const cp = await createControlPlane({ config });
  await cp.app.listen(0, '127.0.0.1');
  const port = (cp.app.getHttpServer().address() as AddressInfo).port;
  const db = cp.app.get<Kysely<unknown>>(KYSELY);
  const rows: BenchRow[] = [];
  try {
    const seq = makeClient(port, adminToken, 1);
    const par = makeClient(port, adminToken, CLIENTS);
    const runnerIds = Array.from({ length: CLIENTS }, (_, i) => `bench-${i}`);
    const bareIds = Array.from({ length: CLIENTS }, (_, i) => `bare-${i}`);
    for (const id of [...runnerIds, ...bareIds]) {
      const cluster = await seq('POST', '/v1/clusters', { name: `c-${id}`, zone: 'us-east-1' });
      const clusterId = (JSON.parse(cluster.body) as { id: string }).id;
      const created = await seq('POST', '/v1/sandbox/managedRunners', {
        identity: { runnerId: id, zone: 'us-east-1', clusterId },
        spec: { releaseChannel: 'RELEASE_CHANNEL_STABLE' },
        policy: { constraints: { lifecycle: { defaultLifetimeSeconds: 3600 } } },
      });
      if (created.status !== 200) throw new Error(`creating ${id}: ${created.status} ${created.body}`);
    }
    const uid = (await sql<{ uid: string }>`SELECT uid FROM cp_runners WHERE runner_id = 'bench-0'`.execute(db)).rows[0]?.uid;
    if (!uid) throw new Error('bench runner has no row');

    // Bare commit floor: 8 connections, single-row INSERT + implicit COMMIT, an event-shaped row.
    const writers = await Promise.all(runnerIds.map(async () => { const c = new Client({ connectionString: config.databaseUrl }); await c.connect(); return c; }));
    await writers[0]!.query(`CREATE TABLE IF NOT EXISTS bench_commits (position bigserial PRIMARY KEY, stream_id text NOT NULL, version int NOT NULL, data jsonb NOT NULL, UNIQUE (stream_id, version))`);
    const versions = new Array<number>(CLIENTS).fill(0);

    const clusterId0 = (JSON.parse((await seq('GET', '/v1/clusters/c-bench-0')).body) as { id: string }).id;
    const patchCpu: number[] = [];
    const healthP50: number[] = [], clusterP50: number[] = [], getCpu: number[] = [];
    const repoP50: number[] = [], queryP50: number[] = [];
    const queries = cp.app.get(RunnerQueries);
    const repo = cp.app.get(RunnerReadRepository);
    const orgId = (await sql<{ organization_id: string }>`SELECT organization_id FROM cp_runners WHERE uid = ${uid}`.execute(db)).rows[0]?.organization_id ?? '';
    const bare = await startBarePartsServer(config.databaseUrl, orgId);
    const bareSeq = makeClient(bare.port, adminToken, 1);
    const bareGetP50: number[] = [];
    const barePar = makeClient(bare.port, adminToken, CLIENTS);
    const bareEtags = new Map<string, string>();
    for (const id of bareIds) bareEtags.set(id, (JSON.parse((await seq('GET', `/v1/sandbox/managedRunners/${id}`)).body) as { etag: string }).etag);
    const bareRate: number[] = [];
    const getP50: number[] = [], getP99: number[] = [], selectP50: number[] = [], patchRate: number[] = [], commitRate: number[] = [];
    let patchConflicts = 0;
    const etags = new Map<string, string>();
    for (const id of runnerIds) etags.set(id, (JSON.parse((await seq('GET', `/v1/sandbox/managedRunners/${id}`)).body) as { etag: string }).etag);
    let lifetime = 3600;

    for (let run = 0; run < RUNS; run++) {
      const select = await timeSequential(() => sql`SELECT * FROM cp_runners WHERE uid = ${uid}`.execute(db), GET_SAMPLES);
      selectP50.push(latencyStats(select).p50);
      repoP50.push(latencyStats(await timeSequential(() => repo.findByRefWithLatest(orgId, 'bench-0'), GET_SAMPLES)).p50);
      queryP50.push(latencyStats(await timeSequential(() => queries.get(orgId, 'bench-0'), GET_SAMPLES)).p50);
      healthP50.push(latencyStats(await timeSequential(() => seq('GET', '/healthz'), GET_SAMPLES)).p50);
      clusterP50.push(latencyStats(await timeSequential(() => seq('GET', `/v1/clusters/${clusterId0}`), GET_SAMPLES)).p50);
      bareGetP50.push(latencyStats(await timeSequential(() => bareSeq('GET', '/bare/bench-0'), GET_SAMPLES)).p50);
      const cpu0 = process.cpuUsage();
      const gets = await timeSequential(async () => {
        const r = await seq('GET', '/v1/sandbox/managedRunners/bench-0');
        if (r.status !== 200) throw new Error(`GET failed: ${r.status} ${r.body}`);
      }, GET_SAMPLES, 0);
      const cpu = process.cpuUsage(cpu0);
      getCpu.push((cpu.user + cpu.system) / 1000 / GET_SAMPLES);
      const g = latencyStats(gets);
      getP50.push(g.p50);
      getP99.push(g.p99);

      commitRate.push(await forSeconds(SECONDS, CLIENTS, async (w) => {
        versions[w]!++;
        await writers[w]!.query('INSERT INTO bench_commits (stream_id, version, data) VALUES ($1, $2, $3)', [`s-${w}`, versions[w], '{"type":"PolicyReplaced","n":1}']);
      }));

      const patchCpu0 = process.cpuUsage();
      let patches = 0;
      patchRate.push(await forSeconds(SECONDS, CLIENTS, async (w) => {
        patches++;
        const id = runnerIds[w]!;
        const r = await par('PATCH', `/v1/sandbox/managedRunners/${id}?updateMask=policy`, {
          policy: { constraints: { lifecycle: { defaultLifetimeSeconds: ++lifetime } } },
          etag: etags.get(id),
        });
        if (r.status !== 200) {
          patchConflicts++;
          if (patchConflicts > 50) throw new Error(`PATCH keeps failing: ${r.status} ${r.body}`);
          etags.set(id, (JSON.parse((await par('GET', `/v1/sandbox/managedRunners/${id}`)).body) as { etag: string }).etag);
          return;
        }
        etags.set(id, (JSON.parse(r.body) as { etag: string }).etag);
      }));
      const pc = process.cpuUsage(patchCpu0);
      patchCpu.push((pc.user + pc.system) / 1000 / patches);

      bareRate.push(await forSeconds(SECONDS, CLIENTS, async (w) => {
        const id = bareIds[w]!;
        const r = await barePar('PATCH', `/bare/${id}`, { policy: { constraints: { lifecycle: { defaultLifetimeSeconds: ++lifetime } } }, etag: bareEtags.get(id) });
        if (r.status !== 200) throw new Error(`bare PATCH failed: ${r.status} ${r.body}`);
        bareEtags.set(id, (JSON.parse(r.body) as { policy_etag: string }).policy_etag);
      }));
    }
    await bare.close();
    await Promise.all(writers.map((c) => c.end()));

    const selectFloor = { name: 'bare indexed SELECT by PK (same pool) p50', median: row('', 'ms', selectP50).median };
    const commitFloor = { name: 'bare single-row commits, 8 connections', median: row('', '/s', commitRate).median };
    rows.push(row('bare indexed SELECT by PK p50', 'ms', selectP50));
    rows.push(row('GET managedRunner p50 (sequential, keep-alive)', 'ms', getP50, { floor: selectFloor, target: '<= 3x floor' }));
    rows.push(row('GET managedRunner p99 (sequential, keep-alive)', 'ms', getP99, { floor: selectFloor }));
    rows.push(row('bare-parts GET p50 (raw Fastify + one prepared SELECT of the row)', 'ms', bareGetP50, {
      floor: selectFloor,
      note: 'attribution: an HTTP request that waits once on Postgres, no app',
    }));
    rows.push(row('GET /healthz p50 (HTTP stack, no DB)', 'ms', healthP50, { floor: selectFloor, note: 'attribution' }));
    rows.push(row('GET /v1/clusters/{id} p50 (auth + 1 indexed query)', 'ms', clusterP50, { floor: selectFloor, note: 'attribution' }));
    rows.push(row('runner lookup query (repository, no HTTP) p50', 'ms', repoP50, { floor: selectFloor, note: 'attribution' }));
    rows.push(row('runner GET use case (query + view, no HTTP) p50', 'ms', queryP50, { floor: selectFloor, note: 'attribution' }));
    rows.push(row('GET managedRunner CPU per request (app + client, one process)', 'ms', getCpu));
    rows.push(row('bare single-row commit rate, 8 connections', '/s', commitRate));
    rows.push(row('policy PATCH throughput, 8 clients (own runner, current etag)', '/s', patchRate, {
      floor: commitFloor,
      target: '>= 0.40x floor',
      note: `${patchConflicts} non-200 responses`,
    }));
    rows.push(row('bare-parts PATCH throughput, 8 clients (raw Fastify + one event-sourced statement)', '/s', bareRate, {
      floor: commitFloor,
      note: 'attribution: HTTP + the etag check, append and row update in ONE statement; no Nest, validation or domain code',
    }));
    rows.push(row('policy PATCH CPU per request (app + client, one process)', 'ms', patchCpu, { note: 'the Node process is the bottleneck when this x rate nears 1000 ms/s' }));
    report('control-plane', rows);
  } finally {
    await cp.app.close();
    await nats.stop();
    pg.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

/**
 * CLI startup cost, beside a bare `node -e 0` measured in the same run (the floor):
 * - `cwic --help` (target: within 50 ms of the floor: a CLI that feels instant);
 * - `cwic sandbox runner --help` (a nested command's help);
 * - `cwic sandbox runner get` against a running control plane (real Postgres, NATS and the
 *   compiled control plane, one cluster and one runner registered), beside the server's own
 *   latency for the same GET, so what remains is the CLI's.
 *
 * Every round runs the commands interleaved (floor, help, nested help, get, floor, ...), so a
 * load spike from a neighbour hits all of them alike; each figure is the median over rounds of
 * each round's p50, and "overhead" is the median over rounds of (command p50 − floor p50).
 * Children get the same environment as the floor, minus NODE_EXTRA_CA_CERTS: Node 20 reads that
 * bundle at startup, in parallel with the main script, which inflates the floor and hides part of
 * the CLI's own cost. Nothing is read from the user's cwic config (CWIC_CONFIG points nowhere).
 *
 *   pnpm --filter @paddock/cli build && pnpm --filter @paddock/control-plane build
 *   pnpm --filter @paddock/cli bench      (PADDOCK_BENCH_N samples per round, PADDOCK_BENCH_RUNS rounds;
 *                                          PADDOCK_BENCH_CLI=<other dist/cli.js> to compare builds)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CONTROL_PLANE_ENTRY,
  httpJson,
  latencyStats,
  medianOf,
  report,
  row,
  startControlPlaneProcess,
  startNats,
  startPostgres,
  timeSequential,
} from '@paddock/testing';

/** PADDOCK_BENCH_CLI=/path/to/another/dist/cli.js compares another build on the same machine. */
const CLI = process.env.PADDOCK_BENCH_CLI ?? join(__dirname, '..', 'dist', 'cli.js');
const TARGET_MS = 50;
const RUNS = Number(process.env.PADDOCK_BENCH_RUNS ?? 5);
const N = Number(process.env.PADDOCK_BENCH_N ?? 20);

for (const [entry, build] of [
  [CLI, 'pnpm --filter @paddock/cli build'],
  [CONTROL_PLANE_ENTRY, 'pnpm --filter @paddock/control-plane build'],
] as const) {
  if (!existsSync(entry)) {
    console.error(`${entry} is missing: run ${build} first`);
    process.exit(1);
  }
}

interface Case {
  name: string;
  args: string[];
  /** p50 of each round. */
  p50s: number[];
  /** p50 of each round minus the floor's p50 in the same round. */
  overheads: number[];
  /** Every sample, for the fastest one (closest to an idle machine). */
  all: number[];
}

function runOnce(args: string[], env: NodeJS.ProcessEnv): { ms: number; status: number | null; stdout: string; stderr: string } {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { env, encoding: 'utf8' });
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, status: r.status, stdout: r.stdout, stderr: r.stderr };
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'cwic-bench-'));
  const pg = await startPostgres();
  const nats = await startNats();
  const cp = await startControlPlaneProcess({ databaseUrl: await pg.createDatabase('paddock'), nats });
  try {
    const cluster = await httpJson<{ id: string }>(cp.url, 'POST', '/v1/clusters', cp.token, { name: 'bench-cluster', zone: 'us-east-1' });
    if (cluster.status >= 300) throw new Error(`registering a cluster: ${cluster.status} ${JSON.stringify(cluster.json)}`);
    const runner = await httpJson(cp.url, 'POST', '/v1/sandbox/managedRunners?requestId=bench-runner-1', cp.token, {
      identity: { runnerId: 'bench-runner-1', zone: 'us-east-1', clusterName: 'bench-cluster' },
      spec: { releaseChannel: 'RELEASE_CHANNEL_STABLE' },
      requestId: 'bench-runner-1',
    });
    if (runner.status >= 300) throw new Error(`creating a runner: ${runner.status} ${JSON.stringify(runner.json)}`);

    const env: NodeJS.ProcessEnv = {
      ...process.env,
      CWIC_CONFIG: join(work, 'no-config.json'),
      PADDOCK_API_KEY: cp.token,
      PADDOCK_CONTROL_PLANE_URL: cp.url,
      PADDOCK_GATEWAY_URL: 'http://127.0.0.1:9',
    };
    delete env.NODE_EXTRA_CA_CERTS;
    delete env.NODE_OPTIONS;

    // Each command must do what it is measured for, once, before it is timed.
    const checks: [string[], (out: string) => boolean][] = [
      [[CLI, '--help'], (o) => o.includes('Usage: cwic')],
      [[CLI, 'sandbox', 'runner', '--help'], (o) => o.includes('Usage: cwic sandbox runner')],
      [[CLI, 'sandbox', 'runner', 'get'], (o) => /^ID\s+ZONE/m.test(o) && o.includes('bench-runner-1')],
    ];
    for (const [args, ok] of checks) {
      const r = runOnce(args, env);
      if (r.status !== 0 || !ok(r.stdout)) throw new Error(`cwic ${args.slice(1).join(' ')} failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
    }

    const floorArgs = ['-e', '0'];
    const cases: Case[] = [
      { name: 'cwic --help', args: [CLI, '--help'], p50s: [], overheads: [], all: [] },
      { name: 'cwic sandbox runner --help', args: [CLI, 'sandbox', 'runner', '--help'], p50s: [], overheads: [], all: [] },
      { name: 'cwic sandbox runner get (1 runner, live control plane)', args: [CLI, 'sandbox', 'runner', 'get'], p50s: [], overheads: [], all: [] },
    ];
    const floorP50s: number[] = [];
    const floorAll: number[] = [];
    const serverP50s: number[] = [];
    for (let round = 0; round < RUNS; round++) {
      for (let i = 0; i < 3; i++) for (const c of [floorArgs, ...cases.map((x) => x.args)]) runOnce(c, env); // warm the page cache
      const floor: number[] = [];
      const samples = cases.map((): number[] => []);
      for (let i = 0; i < N; i++) {
        floor.push(runOnce(floorArgs, env).ms);
        cases.forEach((c, k) => samples[k]?.push(runOnce(c.args, env).ms));
      }
      const floorP50 = latencyStats(floor).p50;
      floorP50s.push(floorP50);
      floorAll.push(...floor);
      cases.forEach((c, k) => {
        const p50 = latencyStats(samples[k] ?? []).p50;
        c.p50s.push(p50);
        c.overheads.push(p50 - floorP50);
        c.all.push(...(samples[k] ?? []));
      });
      // The server's share of `runner get`: the same list request, from a warm in-process client.
      const server = await timeSequential(() => httpJson(cp.url, 'GET', '/v1/sandbox/managedRunners?pageSize=100', cp.token), N, 5);
      serverP50s.push(latencyStats(server).p50);
    }

    const floor = { name: 'node -e 0', median: medianOf(floorP50s) };
    const spread = (v: number[]): string => `[${Math.min(...v).toFixed(1)}..${Math.max(...v).toFixed(1)}]`;
    const [help, nestedHelp, get] = cases as [Case, Case, Case];
    // On a shared, loaded machine the fastest samples tell what an idle one would see.
    const fastest = (c: Case): string => `fastest sample ${Math.min(...c.all).toFixed(1)} ms vs floor ${Math.min(...floorAll).toFixed(1)} ms`;
    const helpOverhead = medianOf(help.overheads);
    const verdict = helpOverhead <= TARGET_MS ? 'MET' : 'NOT MET';
    report('cli-startup', [
      row('node -e 0 (floor; p50 per round)', 'ms', floorP50s),
      row(`${help.name} (p50 per round)`, 'ms', help.p50s, {
        floor,
        target: `<= floor + ${TARGET_MS} ms: ${verdict}`,
        note: `overhead over the floor ${helpOverhead.toFixed(1)} ms, per round ${spread(help.overheads)}; ${fastest(help)}`,
      }),
      row(`${nestedHelp.name} (p50 per round)`, 'ms', nestedHelp.p50s, {
        floor,
        note: `overhead over the floor ${medianOf(nestedHelp.overheads).toFixed(1)} ms, per round ${spread(nestedHelp.overheads)}; ${fastest(nestedHelp)}`,
      }),
      row(`${get.name} (p50 per round)`, 'ms', get.p50s, {
        floor,
        note: `overhead over the floor ${medianOf(get.overheads).toFixed(1)} ms, per round ${spread(get.overheads)}; ${fastest(get)}; of which the server answers in ${medianOf(serverP50s).toFixed(1)} ms`,
      }),
      row('GET /v1/sandbox/managedRunners, warm in-process client (server share; p50 per round)', 'ms', serverP50s),
    ]);
    console.log(`\ntarget: cwic --help within ${TARGET_MS} ms of node -e 0 -> overhead ${helpOverhead.toFixed(1)} ms: ${verdict}`);
    console.log(`(${CLI}; ${RUNS} rounds x ${N} samples per command, interleaved; NODE_EXTRA_CA_CERTS unset for every child)`);
  } finally {
    await cp.stop();
    await nats.stop();
    pg.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});

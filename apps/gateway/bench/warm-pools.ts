import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { RunnerHeartbeatSchema, subjects, type RunnerHeartbeat } from '@paddock/contracts';
import {
  latencyStats,
  provisionGatewayRole,
  report,
  row,
  startNats,
  startPostgres,
  waitFor,
  type BenchRow,
} from '@paddock/testing';
import { startControlPlane } from '../test/support/control-plane';
import { startRunner } from '../test/support/runners';
import { IMAGE } from '../test/support/cluster';
import { Pool } from 'pg';
import {
  burstFloorMs,
  fastifyRoundTripMs,
  leanHttp,
  natsRequestReplyMs,
  p50,
  twoPgCommitsMs,
} from './floors';
import { childPid, machineBusyMs, startCpuStretch, type CpuGroups } from './cpu-attribution';

/**
 * Time to first command through the gateway (create → `:wait` until RUNNING → exec `true`
 * returns), from a runner's warm pool beside a cold start in the same run, sequential and as a
 * burst of 50 against a pool of 50. The floor is the bare parts of that path: three HTTP round
 * trips (create, wait, exec), the create's two Postgres commits and two NATS request/replies
 * (create and exec), each measured here.
 *
 * Method, so that the figures compare like with like:
 * - one lean HTTP client (node:http, keep-alive) for the measured path and for the floor;
 * - before each burst, the sandboxes of the phase before are gone on the runner (its heartbeat
 *   counts none running), the pool is full and the machine is quiet: their netns teardown runs in
 *   kernel workers that would otherwise bill the burst;
 * - a burst floor: 50 bare first commands of the parts at once, what this machine takes for the
 *   burst before any of Paddock's work;
 * - attribution of the warm burst: CPU ms per first command by process, from /proc.
 */
const N = Number(process.env.PADDOCK_BENCH_N ?? 30);
const BURST = 50;
const POOL = 50;
const progress = (stage: string): void =>
  void process.stderr.write(`[bench warm] ${new Date().toISOString()} ${stage}\n`);

/** The pool's template, as an agent's sandbox asks for it; the cold spec differs only in CPU. */
const WARM_SPEC = {
  containers: [
    {
      image: IMAGE,
      resourceRequirements: {
        requests: { cpu: '10m', memory: '32Mi' },
        limits: { cpu: '1', memory: '256Mi' },
      },
    },
  ],
};
const COLD_SPEC = {
  containers: [
    {
      image: IMAGE,
      resourceRequirements: {
        requests: { cpu: '20m', memory: '32Mi' },
        limits: { cpu: '1', memory: '256Mi' },
      },
    },
  ],
};

async function main(): Promise<void> {
  const [pg, nats] = await Promise.all([startPostgres(), startNats()]);
  const databaseUrl = await pg.createDatabase('bench');
  const cp = await startControlPlane(databaseUrl, nats);
  const gatewayDatabaseUrl = await provisionGatewayRole(databaseUrl);
  const { token } = await cp.issueToken('SANDBOX_USER');
  const policyEtag = await cp.declareRunner('r-warm', {});
  const runner = startRunner({
    runnerId: 'r-warm',
    organizationId: cp.organizationId,
    nats: await nats.env('runner', 'r-warm'),
    policy: {},
    policyEtag,
    warmPools: [{ name: 'bench', size: POOL, template: WARM_SPEC }],
    heartbeatMs: 500,
    capacitySandboxes: 500,
  });
  const port = 18000 + Math.floor(Math.random() * 2000);
  // PADDOCK_BENCH_CPU_PROF=<dir>: the gateway writes a V8 CPU profile there on exit (NODE_OPTIONS refuses --cpu-prof).
  const profDir = process.env.PADDOCK_BENCH_CPU_PROF;
  // PADDOCK_BENCH_GATEWAY_MAIN: another checkout's gateway (A/B against the same bench).
  const gatewayMain = process.env.PADDOCK_BENCH_GATEWAY_MAIN ?? join(__dirname, '..', 'src', 'main.ts');
  const gateway: ChildProcess = spawn(
    process.execPath,
    [
      ...(profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []),
      '--conditions=@paddock/source',
      '--import',
      'tsx',
      gatewayMain,
    ],
    {
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: gatewayDatabaseUrl,
        ...(await nats.env('gateway', 'gateway')),
        GATEWAY_PORT: String(port),
        GATEWAY_GRPC_PORT: String(port + 2000),
        GATEWAY_HOST: '127.0.0.1',
        GATEWAY_LOG_LEVEL: 'error',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
      // tsx takes the tsconfig (decorators) of the directory it runs in: the gateway's own app.
      cwd: join(gatewayMain, '..', '..'),
    },
  );
  process.once('exit', () => gateway.kill('SIGKILL'));
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));
  const base = `http://127.0.0.1:${port}`;
  const headers = { authorization: `Bearer ${token}` };
  const client = leanHttp();
  const created: string[] = [];
  const nc = await nats.connectAs('gateway', 'gateway-bench');
  let beat: RunnerHeartbeat | undefined;
  nc.subscribe(subjects.runnerHeartbeat('r-warm'), {
    callback: (_e, m) => void (beat = RunnerHeartbeatSchema.parse(m.json())),
  });
  const poolReady = (): number => beat?.warmPoolStatus?.find((p) => p.name === 'bench')?.ready ?? 0;

  try {
    await waitFor(
      async () => {
        const r = await client
          .request('POST', `${base}/v1/sandboxes:explain`, { spec: WARM_SPEC }, headers)
          .catch(() => undefined);
        return (
          r?.status === 200 && (r.json as { wouldPlaceOn: string | null }).wouldPlaceOn === 'r-warm'
        );
      },
      { timeoutMs: 180_000, intervalMs: 250, what: 'gateway up and runner heartbeating' },
    );
    const fillPool = (): Promise<unknown> =>
      waitFor(() => poolReady() === POOL, {
        timeoutMs: 180_000,
        intervalMs: 100,
        what: `the warm pool at ${POOL}`,
      });
    /**
     * The phase before is over: a heartbeat sent after its deletes counts no sandbox running, the
     * pool is full, and the machine's CPU has settled (the kernel's netns teardown of the deleted
     * sandboxes runs after the runner lets them go). Quiet is bounded: another helper's load may
     * keep the machine busy, which the reported load average then says.
     */
    const settle = async (): Promise<void> => {
      const after = beat?.sequence ?? 0;
      await waitFor(() => (beat?.sequence ?? 0) > after && beat?.capacity.sandboxesRunning === 0, {
        timeoutMs: 180_000,
        intervalMs: 50,
        what: 'the runner with no sandbox running',
      });
      await fillPool();
      const deadline = Date.now() + 10_000;
      for (;;) {
        const m0 = machineBusyMs();
        await new Promise((r) => setTimeout(r, 500));
        const busy = (machineBusyMs() - m0) / 500;
        if (busy < 0.15 || Date.now() > deadline) break;
      }
    };

    /** Where a warm first command's time goes (attribution): the create's reply, then the exec. */
    const parts = { create: [] as number[], exec: [] as number[] };
    const firstCommand = async (spec: typeof WARM_SPEC, attribute = false): Promise<number> => {
      const t0 = performance.now();
      const r = await client.request('POST', `${base}/v1/sandboxes`, { spec }, headers);
      const sb = r.json as { sandboxId: string; status: { state: string } };
      if (r.status !== 200) throw new Error(`create failed: ${JSON.stringify(sb)}`);
      created.push(sb.sandboxId);
      let state = sb.status.state;
      while (state !== 'STATE_RUNNING') {
        if (state === 'STATE_FAILED') throw new Error(`sandbox failed: ${sb.sandboxId}`);
        state = (
          (
            await client.request(
              'GET',
              `${base}/v1/sandboxes/${sb.sandboxId}:wait?timeoutSeconds=30`,
              undefined,
              headers,
            )
          ).json as { status: { state: string } }
        ).status.state;
      }
      const t1 = performance.now();
      const x = await client.request(
        'POST',
        `${base}/v1/sandboxes/${sb.sandboxId}:exec`,
        { command: ['true'], timeoutSeconds: 5 },
        headers,
      );
      const res = x.json as { exitCode?: number };
      if (x.status !== 200 || res.exitCode !== 0) {
        throw new Error(`exec failed: ${JSON.stringify(res)}`);
      }
      const t2 = performance.now();
      if (attribute) {
        parts.create.push(t1 - t0);
        parts.exec.push(t2 - t1);
      }
      return t2 - t0;
    };
    const cleanup = async (): Promise<void> => {
      await Promise.all(
        created
          .splice(0)
          .map((id) => client.request('DELETE', `${base}/v1/sandboxes/${id}`, undefined, headers)),
      );
    };

    progress('floors');
    const fastifyMs = await fastifyRoundTripMs(300, client);
    const pgMs = await twoPgCommitsMs(databaseUrl, 300);
    const natsMs = await natsRequestReplyMs(nats, 300);
    const floor = 3 * p50(fastifyMs) + p50(pgMs) + 2 * p50(natsMs);
    const burstFloor = latencyStats(await burstFloorMs(BURST, client, databaseUrl, nats));
    const selectors = {
      gatewayPid: gateway.pid ?? -1,
      runnerPid: runner.child.pid ?? -1,
      natsPid: childPid('nats-server'),
      postgresDataDir: await dataDirectory(databaseUrl),
    };

    progress('filling the pool');
    await fillPool();
    progress('sequential, cold and warm interleaved');
    // One of each in turn: load that comes and goes on the shared machine weighs on both alike.
    await firstCommand(COLD_SPEC);
    await firstCommand(WARM_SPEC);
    await cleanup();
    const seq = { cold: [] as number[], warm: [] as number[] };
    for (let i = 0; i < N; i++) {
      seq.cold.push(await firstCommand(COLD_SPEC));
      seq.warm.push(await firstCommand(WARM_SPEC, true));
      if (created.length >= 20) await cleanup();
    }
    await cleanup();
    const [coldSeq, warmSeq] = [latencyStats(seq.cold), latencyStats(seq.warm)];

    progress('settling before the cold burst');
    await settle();
    progress('cold burst');
    const coldBurst = latencyStats(
      await Promise.all(Array.from({ length: BURST }, () => firstCommand(COLD_SPEC))),
    );
    await cleanup();
    progress('settling before the warm burst (deletions gone, pool refilled)');
    await settle();
    progress('warm burst');
    const stretch = startCpuStretch(selectors);
    const warmBurst = latencyStats(
      await Promise.all(Array.from({ length: BURST }, () => firstCommand(WARM_SPEC))),
    );
    const cpu = stretch();
    await cleanup();
    const perCommand = (g: keyof CpuGroups): number => cpu[g] / BURST;

    // The same attribution for warm first commands one after the other: each process's own cost
    // per command, without the queueing of a burst. A moment after the last, what the takes
    // caused after their replies (state events) is in too.
    progress('settling before the sequential warm stretch');
    await settle();
    progress('sequential warm stretch');
    const seqN = Math.min(N, POOL - 10);
    const seqStretch = startCpuStretch(selectors);
    for (let i = 0; i < seqN; i++) await firstCommand(WARM_SPEC);
    await new Promise((r) => setTimeout(r, 200));
    const seqCpu = seqStretch();
    await cleanup();

    const rows: BenchRow[] = [
      row('floor: 3 HTTP round trips + 2 postgres commits + 2 NATS request/replies', 'ms p50', [
        floor,
      ]),
      row('time to first command, cold, sequential p50', 'ms', [coldSeq.p50], {
        floor: { name: 'bare parts p50', median: floor },
      }),
      row('time to first command, warm pool, sequential p50', 'ms', [warmSeq.p50], {
        floor: { name: 'bare parts p50', median: floor },
        target: '≤ 3× floor',
      }),
      row(
        'time to first command, warm / cold, sequential p50',
        'ratio',
        [warmSeq.p50 / coldSeq.p50],
        {
          target: '≤ 0.25',
          note: `warm ${warmSeq.p50.toFixed(1)} ms, cold ${coldSeq.p50.toFixed(1)} ms`,
        },
      ),
      row(
        'warm pool, sequential: create until its reply (RUNNING) p50',
        'ms',
        [p50(parts.create)],
        { note: 'attribution: HTTP, 2 commits, placement, NATS create, the take' },
      ),
      row('warm pool, sequential: first exec `true` p50', 'ms', [p50(parts.exec)], {
        note: "attribution: the taken sandbox's exec daemon already runs (primed)",
      }),
      row(`time to first command, cold, burst of ${BURST} p99`, 'ms', [coldBurst.p99]),
      row(
        `time to first command, warm pool of ${POOL}, burst of ${BURST} p99`,
        'ms',
        [warmBurst.p99],
        {
          floor: { name: `cold burst of ${BURST} p99`, median: coldBurst.p99 },
          target: '< 100 ms',
        },
      ),
      row(
        `time to first command, warm / cold, burst of ${BURST} p99`,
        'ratio',
        [warmBurst.p99 / coldBurst.p99],
        { target: '≤ 0.15' },
      ),
      row(
        `floor: burst of ${BURST} bare first commands (3 HTTP + 2 PG commits + 2 NATS each) p99`,
        'ms',
        [burstFloor.p99],
        {
          note: `p50 ${burstFloor.p50.toFixed(1)} ms: how far this machine itself is from 100 ms`,
        },
      ),
      ...(
        [
          ['gateway', 'gateway'],
          ['runner', 'runner (node)'],
          ['execDaemons', 'exec daemons and their spawners (paddock-execd, paddock-spawner)'],
          ['supervisors', 'supervisors (python)'],
          ['sandboxesOther', "sandboxes' other processes (bwrap, the sandboxes' own)"],
          ['postgres', 'postgres'],
          ['nats', 'nats-server'],
          ['client', 'bench client'],
          ['kernelThreads', 'kernel threads (whole machine)'],
          ['reapedChildren', 'processes that ended, their lifetime (reaped by the above; 10 ms ticks)'],
          ['interrupts', 'irq + softirq (loopback TCP; whole machine, 10 ms ticks)'],
          ['otherProcesses', 'every other process (other load)'],
          ['machine', 'whole machine (all CPUs, other load included)'],
        ] as const
      ).flatMap(([g, name]) => [
        row(`warm burst of ${BURST}: CPU per first command, ${name}`, 'ms', [perCommand(g)], {
          note: 'attribution, from /proc',
        }),
        row(`warm sequential (${seqN}): CPU per first command, ${name}`, 'ms', [seqCpu[g] / seqN], {
          note: 'attribution, from /proc',
        }),
      ]),
    ];
    report('gateway-warm-pools', rows);
  } finally {
    client.close();
    await nc.close();
    // Waited for: a CPU profile is written as the gateway exits.
    const exited = new Promise((r) => gateway.once('exit', r));
    gateway.kill('SIGTERM');
    if (gateway.exitCode === null) await exited;
    await runner.stop();
    await cp.stop();
    await nats.stop();
    pg.stop();
  }
}

async function dataDirectory(databaseUrl: string): Promise<string> {
  const pool = new Pool({ connectionString: databaseUrl, max: 1 });
  try {
    return (
      (await pool.query<{ data_directory: string }>('SHOW data_directory')).rows[0]
        ?.data_directory ?? ''
    );
  } finally {
    await pool.end();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);

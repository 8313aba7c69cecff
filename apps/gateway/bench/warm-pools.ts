import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { RunnerHeartbeatSchema, subjects, type RunnerHeartbeat } from '@paddock/contracts';
import { latencyStats, provisionGatewayRole, report, row, startNats, startPostgres, waitFor, type BenchRow } from '@paddock/testing';
import { startControlPlane } from '../test/support/control-plane';
import { startRunner } from '../test/support/runners';
import { IMAGE } from '../test/support/cluster';
import { fastifyRoundTripMs, natsRequestReplyMs, p50, twoPgCommitsMs } from './floors';

/**
 * Time to first command through the gateway (create → `:wait` until RUNNING → exec `true`
 * returns), from a runner's warm pool beside a cold start in the same run, sequential and as a
 * burst of 50 against a pool of 50. The floor is the bare parts of that path: three HTTP round
 * trips (create, wait, exec), the create's two Postgres commits and two NATS request/replies
 * (create and exec), each measured here.
 */
const N = Number(process.env.PADDOCK_BENCH_N ?? 30);
const BURST = 50;
const POOL = 50;
const progress = (stage: string): void => void process.stderr.write(`[bench warm] ${new Date().toISOString()} ${stage}\n`);

/** The pool's template, as an agent's sandbox asks for it; the cold spec differs only in CPU. */
const WARM_SPEC = { containers: [{ image: IMAGE, resourceRequirements: { requests: { cpu: '10m', memory: '32Mi' }, limits: { cpu: '1', memory: '256Mi' } } }] };
const COLD_SPEC = { containers: [{ image: IMAGE, resourceRequirements: { requests: { cpu: '20m', memory: '32Mi' }, limits: { cpu: '1', memory: '256Mi' } } }] };

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
  const gateway: ChildProcess = spawn(process.execPath, ['--conditions=@paddock/source', '--import', 'tsx', join(__dirname, '..', 'src', 'main.ts')], {
    env: { PATH: process.env.PATH, DATABASE_URL: gatewayDatabaseUrl, ...(await nats.env('gateway', 'gateway')), GATEWAY_PORT: String(port), GATEWAY_GRPC_PORT: String(port + 2000), GATEWAY_HOST: '127.0.0.1', GATEWAY_LOG_LEVEL: 'error' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  process.once('exit', () => gateway.kill('SIGKILL'));
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));
  const base = `http://127.0.0.1:${port}`;
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const created: string[] = [];
  const nc = await nats.connectAs('gateway', 'gateway-bench');
  let beat: RunnerHeartbeat | undefined;
  nc.subscribe(subjects.runnerHeartbeat('r-warm'), { callback: (_e, m) => void (beat = RunnerHeartbeatSchema.parse(m.json())) });
  const poolReady = (): number => beat?.warmPoolStatus?.find((p) => p.name === 'bench')?.ready ?? 0;

  try {
    await waitFor(
      async () => {
        const r = await fetch(`${base}/v1/sandboxes:explain`, { method: 'POST', headers, body: JSON.stringify({ spec: WARM_SPEC }) });
        return r.ok && ((await r.json()) as { wouldPlaceOn: string | null }).wouldPlaceOn === 'r-warm';
      },
      { timeoutMs: 180_000, intervalMs: 250, what: 'gateway up and runner heartbeating' },
    );
    const fillPool = (): Promise<unknown> => waitFor(() => poolReady() === POOL, { timeoutMs: 180_000, intervalMs: 100, what: `the warm pool at ${POOL}` });

    /** Where a warm first command's time goes (attribution): the create's reply, then the exec. */
    const parts = { create: [] as number[], exec: [] as number[] };
    const firstCommand = async (spec: typeof WARM_SPEC, attribute = false): Promise<number> => {
      const t0 = performance.now();
      const r = await fetch(`${base}/v1/sandboxes`, { method: 'POST', headers, body: JSON.stringify({ spec }) });
      const sb = (await r.json()) as { sandboxId: string; status: { state: string } };
      if (!r.ok) throw new Error(`create failed: ${JSON.stringify(sb)}`);
      created.push(sb.sandboxId);
      let state = sb.status.state;
      while (state !== 'STATE_RUNNING') {
        if (state === 'STATE_FAILED') throw new Error(`sandbox failed: ${sb.sandboxId}`);
        state = ((await (await fetch(`${base}/v1/sandboxes/${sb.sandboxId}:wait?timeoutSeconds=30`, { headers })).json()) as { status: { state: string } }).status.state;
      }
      const t1 = performance.now();
      const x = await fetch(`${base}/v1/sandboxes/${sb.sandboxId}:exec`, { method: 'POST', headers, body: JSON.stringify({ command: ['true'], timeoutSeconds: 5 }) });
      const res = (await x.json()) as { exitCode?: number };
      if (!x.ok || res.exitCode !== 0) throw new Error(`exec failed: ${JSON.stringify(res)}`);
      const t2 = performance.now();
      if (attribute) {
        parts.create.push(t1 - t0);
        parts.exec.push(t2 - t1);
      }
      return t2 - t0;
    };
    const cleanup = async (): Promise<void> => {
      await Promise.all(created.splice(0).map((id) => fetch(`${base}/v1/sandboxes/${id}`, { method: 'DELETE', headers: { authorization: headers.authorization } })));
    };

    progress('floors');
    const fastifyMs = await fastifyRoundTripMs(300);
    const pgMs = await twoPgCommitsMs(databaseUrl, 300);
    const natsMs = await natsRequestReplyMs(nats, 300);
    const floor = 3 * p50(fastifyMs) + p50(pgMs) + 2 * p50(natsMs);

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

    progress('cold burst');
    const coldBurst = latencyStats(await Promise.all(Array.from({ length: BURST }, () => firstCommand(COLD_SPEC))));
    await cleanup();
    progress('refilling the pool');
    await fillPool();
    progress('warm burst');
    const warmBurst = latencyStats(await Promise.all(Array.from({ length: BURST }, () => firstCommand(WARM_SPEC))));
    await cleanup();

    const rows: BenchRow[] = [
      row('floor: 3 HTTP round trips + 2 postgres commits + 2 NATS request/replies', 'ms p50', [floor]),
      row('time to first command, cold, sequential p50', 'ms', [coldSeq.p50], { floor: { name: 'bare parts p50', median: floor } }),
      row('time to first command, warm pool, sequential p50', 'ms', [warmSeq.p50], { floor: { name: 'bare parts p50', median: floor }, target: '≤ 3× floor' }),
      row('time to first command, warm / cold, sequential p50', 'ratio', [warmSeq.p50 / coldSeq.p50], { target: '≤ 0.25', note: `warm ${warmSeq.p50.toFixed(1)} ms, cold ${coldSeq.p50.toFixed(1)} ms` }),
      row('warm pool, sequential: create until its reply (RUNNING) p50', 'ms', [p50(parts.create)], { note: 'attribution: HTTP, 2 commits, placement, NATS create, the take' }),
      row('warm pool, sequential: first exec `true` p50', 'ms', [p50(parts.exec)], { note: "attribution: the taken sandbox's exec daemon already runs (primed)" }),
      row(`time to first command, cold, burst of ${BURST} p99`, 'ms', [coldBurst.p99]),
      row(`time to first command, warm pool of ${POOL}, burst of ${BURST} p99`, 'ms', [warmBurst.p99], { floor: { name: `cold burst of ${BURST} p99`, median: coldBurst.p99 }, target: '< 100 ms' }),
      row(`time to first command, warm / cold, burst of ${BURST} p99`, 'ratio', [warmBurst.p99 / coldBurst.p99], { target: '≤ 0.15' }),
    ];
    report('gateway-warm-pools', rows);
  } finally {
    await nc.close();
    gateway.kill('SIGTERM');
    await runner.stop();
    await cp.stop();
    await nats.stop();
    pg.stop();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);

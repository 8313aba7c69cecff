/**
 * First exec after a warm take against the ones after it: a create taken from the runner's warm
 * pool, then exec `true` three times at once after its reply and a fourth after an idle moment
 * (the first exec's share that is only the processes' coldness), each timed; over NATS (the
 * runner's real path) and in process on the warm-pool backend (the runner's part alone), interleaved.
 *
 *   node --conditions=@paddock/source --import tsx bench/first-exec.ts
 *
 * PADDOCK_BENCH_TAKES (default 60): takes per path.
 */
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { latencyStats, report, row, waitFor, type BenchRow } from '@paddock/testing';
import { BASE_IMAGE, ORG, startHarness } from '../test/support/harness';

const TAKES = Number(process.env.PADDOCK_BENCH_TAKES ?? 60);
const POOL = 8;
const IDLE_MS = 50;
const TEMPLATE = {
  containers: [
    {
      name: 'main',
      image: BASE_IMAGE,
      resourceRequirements: {
        requests: { cpu: '10m', memory: '32Mi' },
        limits: { cpu: '1', memory: '256Mi' },
      },
    },
  ],
  maxLifetimeSeconds: 600,
};
const SPEC = { containers: TEMPLATE.containers, maxLifetimeSeconds: 300 };

async function main(): Promise<void> {
  const configDir = mkdtempSync(join(tmpdir(), 'paddock-first-exec-'));
  const configPath = join(configDir, 'runner.json');
  const tmp = `${configPath}.tmp`;
  writeFileSync(
    tmp,
    JSON.stringify({
      revision: 1,
      policyEtag: 'etag-bench',
      policy: {},
      warmPools: [{ name: 'bench', size: POOL, template: TEMPLATE }],
    }),
  );
  renameSync(tmp, configPath);
  const h = await startHarness({ configPath, heartbeatIntervalMs: 1_000 });
  const ready = (): number =>
    h.runner.warmPools.status().find((p) => p.name === 'bench')?.ready ?? 0;
  const progress = (msg: string): boolean => process.stderr.write(`[bench first-exec] ${msg}\n`);
  try {
    type Path = 'nats' | 'direct';
    const samples: Record<Path, number[][]> = { nats: [[], [], [], []], direct: [[], [], [], []] };
    let n = 0;
    const take = async (path: Path): Promise<void> => {
      // A full pool and a quiet moment: no refill's launch runs beside the measured execs.
      await waitFor(() => ready() === POOL, {
        timeoutMs: 60_000,
        intervalMs: 5,
        what: 'the pool refilled',
      });
      await new Promise((r) => setTimeout(r, 30));
      const id = `fx-${path}-${++n}`;
      const created = await h.client.call('create', {
        sandboxId: id,
        organizationId: ORG,
        spec: SPEC,
      });
      if (created.sandbox.status.state !== 'STATE_RUNNING')
        {throw new Error(`not a warm take: ${created.sandbox.status.state}`);}
      if (h.runner.warmPools.warmIdOf(id) === undefined)
        {throw new Error('the create launched cold');}
      for (const [i, out] of samples[path].entries()) {
        // The fourth after an idle moment: what an exec costs once the processes went cold again.
        if (i === 3) await new Promise((r) => setTimeout(r, IDLE_MS));
        const t0 = process.hrtime.bigint();
        const r =
          path === 'nats'
            ? await h.client.call('exec', { sandboxId: id, organizationId: ORG, argv: ['true'] })
            : await h.runner.warmPools.exec(id, { argv: ['true'] });
        out.push(Number(process.hrtime.bigint() - t0) / 1e6);
        if (r.exitCode !== 0) throw new Error(`exec exited ${r.exitCode}`);
      }
      await h.client.call('delete', { sandboxId: id, organizationId: ORG, gracePeriodSeconds: 0 });
    };
    progress('filling the pool');
    await waitFor(() => ready() === POOL, {
      timeoutMs: 120_000,
      intervalMs: 50,
      what: 'the pool full',
    });
    await take('nats');
    await take('direct');
    for (const s of [...samples.nats, ...samples.direct]) s.splice(0);
    progress(`${TAKES} takes per path, interleaved`);
    for (let i = 0; i < TAKES; i++) {
      await take('nats');
      await take('direct');
    }
    const load = readFileSync('/proc/loadavg', 'utf8').trim();
    const rows: BenchRow[] = [];
    for (const path of ['nats', 'direct'] as const) {
      const name = path === 'nats' ? 'over NATS' : 'warm-pool backend in process';
      for (const [i, st] of samples[path].map((x) => latencyStats(x)).entries()) {
        const which = i < 3 ? `#${i + 1} after a warm take` : `#4, ${IDLE_MS} ms after #3`;
        rows.push(
          row(`exec true ${which}, ${name} p50`, 'ms', [st.p50], {
            note: `min ${st.min.toFixed(2)} p90 ${st.p90.toFixed(2)}`,
          }),
        );
      }
    }
    // Per take, #1 less #2 of the same take: load that comes and goes weighs on both alike.
    for (const path of ['nats', 'direct'] as const) {
      const [first = [], second = [], third = [], fourth = []] = samples[path];
      const gap = latencyStats(first.map((v, i) => v - (second[i] ?? NaN)));
      const idle = latencyStats(fourth.map((v, i) => v - (third[i] ?? NaN)));
      const name = path === 'nats' ? 'over NATS' : 'in process';
      rows.push(row(`exec #1 − #2 of the same take, ${name} p50`, 'ms', [gap.p50], { note: `#4 (after ${IDLE_MS} ms idle) − #3 p50 ${idle.p50.toFixed(2)}` }));
    }
    rows.push(
      row('load average after', '1/5/15 min', [Number(load.split(' ')[0])], { note: load }),
    );
    report('runner-first-exec', rows);
  } finally {
    writeFileSync(
      tmp,
      JSON.stringify({ revision: 2, policyEtag: 'etag-bench', policy: {}, warmPools: [] }),
    );
    renameSync(tmp, configPath);
    await h.runner.configSettled();
    await waitFor(() => h.runner.warmPools.held().sandboxes === 0, {
      timeoutMs: 30_000,
      what: 'every warm sandbox drained',
    }).catch(() => undefined);
    await h.stop();
    rmSync(configDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);

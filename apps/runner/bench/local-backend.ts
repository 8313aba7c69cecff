/**
 * Local backend benchmark: launch → RUNNING and exec round trip, each printed beside a floor
 * measured in the same run on the same machine.
 *
 *   node --conditions=@paddock/source --import tsx bench/local-backend.ts
 *
 * Env: BENCH_LAUNCHES (default 200), BENCH_BURST (50), BENCH_EXECS (200).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { BARE_BWRAP_ROOT, latencyStats, report, row, timeSequential, type BenchRow, type LatencyStats } from '@paddock/testing';
import type { BackendEvent, LaunchSpec } from '../src/backend/sandbox-backend';
import { LocalBackend } from '../src/backend/local';

const LAUNCHES = Number(process.env.BENCH_LAUNCHES ?? 200);
const BURST = Number(process.env.BENCH_BURST ?? 50);
const EXECS = Number(process.env.BENCH_EXECS ?? 200);

function spawnExit(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, args, { stdio: 'ignore' });
    c.once('error', reject);
    c.once('exit', () => resolve());
  });
}

/** The floor of one sandbox start: cgroup v1 create + limits + rmdir, done with sync fs calls. */
function cgroupCycle(root: string, i: number): void {
  const dirs = ['pids', 'memory', 'cpu'].map((c) => join(root, c, 'paddock-bench-floor', String(i)));
  for (const d of dirs) mkdirSync(d, { recursive: true });
  writeFileSync(join(dirs[0] as string, 'pids.max'), '128');
  writeFileSync(join(dirs[1] as string, 'memory.limit_in_bytes'), String(256 << 20));
  writeFileSync(join(dirs[2] as string, 'cpu.cfs_period_us'), '100000');
  writeFileSync(join(dirs[2] as string, 'cpu.cfs_quota_us'), '100000');
  for (const d of dirs) rmdirSync(d);
}

function spec(sandboxId: string, net: Pick<LaunchSpec, 'network' | 'egressCidrs'> = { network: 'none' }): LaunchSpec {
  return {
    sandboxId,
    organizationId: 'bench',
    runnerId: 'bench',
    image: '',
    command: [],
    env: {},
    cpuMillis: 500,
    memoryBytes: 256 << 20,
    pidsMax: 128,
    diskBytes: 32 << 20,
    openFilesMax: 1024,
    lifetimeSeconds: 600,
    files: [],
    labels: {},
    ...net,
  };
}

/** The three network kinds a launch can have: loopback only, unrestricted egress, CIDR grants. */
const NETWORKS: { name: string; net: Pick<LaunchSpec, 'network' | 'egressCidrs'> }[] = [
  { name: 'egress denied (bwrap netns, loopback only)', net: { network: 'none' } },
  { name: 'egress allowed (own netns + veth + nft chain)', net: { network: 'host' } },
  { name: 'CIDR grant (own netns + veth + nft chain)', net: { network: 'none', egressCidrs: [{ cidr: '203.0.113.0/24', except: [], ports: [{ protocol: 'TCP', port: 443 }] }] } },
];

const NET_LAUNCHES = Number(process.env.BENCH_NET_LAUNCHES ?? 100);

async function netFloorAndLaunches(
  backend: LocalBackend,
  launchTimed: (id: string, net: Pick<LaunchSpec, 'network' | 'egressCidrs'>) => Promise<number>,
): Promise<{ setup: LatencyStats; teardown: LatencyStats; launches: number[][] }> {
  const net = backend.networks();
  const setup: number[] = [];
  const teardown: number[] = [];
  for (let i = 0; i < NET_LAUNCHES + 10; i++) {
    const t0 = process.hrtime.bigint();
    await net.setup('floor', { kind: 'unrestricted' });
    const t1 = process.hrtime.bigint();
    await net.teardown('floor');
    if (i >= 10) {
      setup.push(Number(t1 - t0) / 1e6);
      teardown.push(Number(process.hrtime.bigint() - t1) / 1e6);
    }
  }
  const launches: number[][] = NETWORKS.map(() => []);
  for (let i = 0; i < NET_LAUNCHES; i++) {
    for (const [k, n] of NETWORKS.entries()) {
      const id = `net-${k}-${i}`;
      (launches[k] as number[]).push(await launchTimed(id, n.net));
      await backend.reap(id, 'RUNNER_DELETED');
    }
  }
  return { setup: latencyStats(setup), teardown: latencyStats(teardown), launches };
}

async function main(): Promise<void> {
  const runnerId = `bench${process.pid}`;
  const stateDir = join('/tmp/paddock-bench', runnerId);
  const backend = new LocalBackend({ runnerId, stateDir });
  const waiters = new Map<string, (e: BackendEvent) => void>();
  backend.onEvent((e) => {
    if (e.state === 'STATE_RUNNING' || e.state === 'STATE_FAILED') waiters.get(e.sandboxId)?.(e);
  });
  const launchTimed = async (id: string, net?: Pick<LaunchSpec, 'network' | 'egressCidrs'>): Promise<number> => {
    const t0 = process.hrtime.bigint();
    const running = new Promise<BackendEvent>((r) => waiters.set(id, r));
    await backend.launch(spec(id, net));
    const e = await running;
    if (e.state !== 'STATE_RUNNING') throw new Error(`${id}: ${e.reason} ${e.message}`);
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  const cgRoot = '/sys/fs/cgroup';
  const rows: BenchRow[] = [];
  try {
    await backend.recover(); // prepares the state dir, cgroup tree and supervisor zygote
    await new Promise((r) => setTimeout(r, 1000));

    // Floors, measured now.
    const bwrapFloor = latencyStats(
      await timeSequential(() => spawnExit('bwrap', [...BARE_BWRAP_ROOT, '--dev', '/dev', '--proc', '/proc', '--unshare-all', '--die-with-parent', '/bin/true']), 200),
    );
    let n = 0;
    const cgFloor = latencyStats(await timeSequential(() => cgroupCycle(cgRoot, n++), 200));
    rmdirSync(join(cgRoot, 'pids', 'paddock-bench-floor'));
    rmdirSync(join(cgRoot, 'memory', 'paddock-bench-floor'));
    rmdirSync(join(cgRoot, 'cpu', 'paddock-bench-floor'));
    const trueFloor = latencyStats(await timeSequential(() => spawnExit('/bin/true', []), 200));
    // The burst's own floor: the same number of bare bwrap sandboxes started at once.
    const bwrapBurst = latencyStats(
      await Promise.all(
        Array.from({ length: BURST }, async () => {
          const t0 = process.hrtime.bigint();
          await spawnExit('bwrap', [...BARE_BWRAP_ROOT, '--dev', '/dev', '--proc', '/proc', '--unshare-all', '--die-with-parent', '/bin/true']);
          return Number(process.hrtime.bigint() - t0) / 1e6;
        }),
      ),
    );
    const launchFloor = bwrapFloor.p50 + cgFloor.p50;
    const launchFloorP99 = bwrapFloor.p99 + cgFloor.p99;
    rows.push(row('floor: bare bwrap --unshare-all /bin/true spawn→exit p50', 'ms', [bwrapFloor.p50], { note: `p99 ${bwrapFloor.p99.toFixed(2)}` }));
    rows.push(row('floor: cgroup v1 create+limits+rmdir p50', 'ms', [cgFloor.p50], { note: `p99 ${cgFloor.p99.toFixed(3)}` }));
    rows.push(row('floor: spawn /bin/true p50', 'ms', [trueFloor.p50]));

    // Sequential launches (each reaped before the next, untimed).
    const seq: number[] = [];
    for (let i = 0; i < LAUNCHES; i++) {
      const id = `seq-${i}`;
      seq.push(await launchTimed(id));
      await backend.reap(id, 'RUNNER_DELETED');
    }
    const s = latencyStats(seq);
    rows.push(row(`launch→RUNNING p50, ${LAUNCHES} sequential`, 'ms', [s.p50], { floor: { name: 'bwrap+cgroup p50', median: launchFloor }, target: '≤ 3× floor' }));
    rows.push(row(`launch→RUNNING p99, ${LAUNCHES} sequential`, 'ms', [s.p99], { floor: { name: 'bwrap+cgroup p99', median: launchFloorP99 } }));

    // The network namespace's cost: launches of the three kinds interleaved (so they share the
    // machine's load), beside the floor of the same netns + veth + nft setup done alone.
    const nets = await netFloorAndLaunches(backend, launchTimed);
    for (const [i, k] of NETWORKS.entries()) {
      const st = latencyStats(nets.launches[i] as number[]);
      const floorName = i === 0 ? 'bwrap+cgroup p50' : 'bwrap+cgroup p50 + netns setup p50';
      rows.push(row(`launch→RUNNING p50, ${NET_LAUNCHES} sequential, ${k.name}`, 'ms', [st.p50], { floor: { name: floorName, median: launchFloor + (i === 0 ? 0 : nets.setup.p50) }, note: `p99 ${st.p99.toFixed(2)}` }));
    }
    rows.push(row('floor: netns + veth + nft chain setup alone p50', 'ms', [nets.setup.p50], { note: `p99 ${nets.setup.p99.toFixed(2)}; teardown p50 ${nets.teardown.p50.toFixed(2)}` }));
    const denied = latencyStats(nets.launches[0] as number[]).p50;
    rows.push(row('egress netns cost on launch→RUNNING p50 (allowed − denied)', 'ms', [latencyStats(nets.launches[1] as number[]).p50 - denied]));
    rows.push(row('CIDR-grant netns cost on launch→RUNNING p50 (grant − denied)', 'ms', [latencyStats(nets.launches[2] as number[]).p50 - denied]));

    // A burst of concurrent launches.
    const burst = await Promise.all(Array.from({ length: BURST }, (_, i) => launchTimed(`burst-${i}`)));
    const b = latencyStats(burst);
    rows.push(row(`launch→RUNNING p50, burst of ${BURST}`, 'ms', [b.p50], { floor: { name: `${BURST} concurrent bare bwrap p50`, median: bwrapBurst.p50 } }));
    rows.push(row(`launch→RUNNING p99, burst of ${BURST}`, 'ms', [b.p99], { floor: { name: `${BURST} concurrent bare bwrap p99`, median: bwrapBurst.p99 } }));
    await Promise.all(Array.from({ length: BURST }, (_, i) => backend.reap(`burst-${i}`, 'RUNNER_DELETED')));

    // A burst of egress launches (and their removal) beside a sandbox in use: the runner's own
    // work for the burst, each link's `ip` runs among it, should not stall the execs of a sandbox
    // that has nothing to do with it, nor the event loop that serves every call.
    await launchTimed('beside');
    const quietExec = latencyStats(await timeSequential(() => backend.exec('beside', { argv: ['true'] }), 100));
    const loopDelay = monitorEventLoopDelay({ resolution: 1 });
    loopDelay.enable();
    let bursting = true;
    const besideExec: number[] = [];
    const execsBeside = (async () => {
      while (bursting) {
        const t0 = process.hrtime.bigint();
        await backend.exec('beside', { argv: ['true'] });
        besideExec.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    })();
    const egressBurst = NETWORKS[1]?.net;
    await Promise.all(Array.from({ length: BURST }, (_, i) => launchTimed(`egress-burst-${i}`, egressBurst)));
    await Promise.all(Array.from({ length: BURST }, (_, i) => backend.reap(`egress-burst-${i}`, 'RUNNER_DELETED')));
    bursting = false;
    await execsBeside;
    loopDelay.disable();
    const bx = latencyStats(besideExec);
    rows.push(row(`exec true round trip p99 beside a burst of ${BURST} egress launches and their removal`, 'ms', [bx.p99], { floor: { name: 'the same sandbox, no burst, p99', median: quietExec.p99 }, note: `p50 ${bx.p50.toFixed(2)} (no burst ${quietExec.p50.toFixed(2)}), ${besideExec.length} execs` }));
    rows.push(row(`event-loop delay max during a burst of ${BURST} egress launches and their removal`, 'ms', [loopDelay.max / 1e6], { note: `p99 ${(loopDelay.percentile(99) / 1e6).toFixed(2)}, p50 ${(loopDelay.percentile(50) / 1e6).toFixed(2)}` }));
    await backend.reap('beside', 'RUNNER_DELETED');

    // Exec round trip of `true` in a warm sandbox.
    await launchTimed('exec');
    const ex = latencyStats(await timeSequential(() => backend.exec('exec', { argv: ['true'] }), EXECS));
    rows.push(row(`exec true round trip p50 (${EXECS})`, 'ms', [ex.p50], { floor: { name: 'spawn /bin/true p50', median: trueFloor.p50 }, target: '< 5 ms' }));
    rows.push(row(`exec true round trip p99 (${EXECS})`, 'ms', [ex.p99], { floor: { name: 'spawn /bin/true p99', median: trueFloor.p99 } }));
    // The same exec after 10 ms of nothing (the machine idle in between), beside back-to-back ones
    // interleaved with it: an agent's command, and a warm pool's first one, follow an idle gap, and
    // every process on the path (runner, supervisor, exec daemon, spawner) wakes from sleep.
    const gap = { idle: [] as number[], hot: [] as number[] };
    for (let i = 0; i < EXECS / 2; i++) {
      await new Promise((r) => setTimeout(r, 10));
      for (const k of ['idle', 'hot'] as const) {
        const t0 = process.hrtime.bigint();
        await backend.exec('exec', { argv: ['true'] });
        gap[k].push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }
    const [afterIdle, backToBack] = [latencyStats(gap.idle), latencyStats(gap.hot)];
    rows.push(row(`exec true round trip p50 after 10 ms idle (${EXECS / 2})`, 'ms', [afterIdle.p50], { floor: { name: 'the next exec, back to back, p50', median: backToBack.p50 }, note: `p99 ${afterIdle.p99.toFixed(2)} against ${backToBack.p99.toFixed(2)}` }));
    await backend.reap('exec', 'RUNNER_DELETED');

    // Exec does not cross the network (it reaches the supervisor's Unix socket), so a sandbox in
    // its own egress namespace should exec as fast as one without: both, interleaved.
    await launchTimed('exec-denied', NETWORKS[0]?.net);
    await launchTimed('exec-egress', NETWORKS[1]?.net);
    const byNet: number[][] = [[], []];
    for (let i = 0; i < EXECS; i++) {
      for (const [k, id] of (['exec-denied', 'exec-egress'] as const).entries()) {
        const t0 = process.hrtime.bigint();
        await backend.exec(id, { argv: ['true'] });
        byNet[k]?.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }
    const exDenied = latencyStats(byNet[0] ?? []);
    const exEgress = latencyStats(byNet[1] ?? []);
    rows.push(row(`exec true round trip p50 (${EXECS}), egress sandbox (own netns) beside an egress-denied one`, 'ms', [exEgress.p50], { floor: { name: 'egress-denied sandbox p50, interleaved', median: exDenied.p50 }, target: 'within noise (≈ 1×)' }));
    await backend.reap('exec-denied', 'RUNNER_DELETED');
    await backend.reap('exec-egress', 'RUNNER_DELETED');
  } finally {
    for (const r of await backend.recover()) await backend.reap(r.sandboxId, 'RUNNER_DELETED');
    await backend.close();
    await new Promise((r) => setTimeout(r, 500));
    backend.cgroupTree().removeRunnerTree();
    rmSync(stateDir, { recursive: true, force: true });
  }
  report('runner-local-backend', rows);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

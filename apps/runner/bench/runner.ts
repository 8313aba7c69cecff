/**
 * Runner service benchmark: create → RUNNING latency (sequential and a burst), exec round trip
 * over NATS, each beside floors measured in the same run on the same machine:
 * - a bare `bwrap ... /bin/true` spawn (the sandbox mechanism alone),
 * - a bare NATS request/reply between two connections on a server without authentication (the
 *   transport alone), next to the same request/reply between a gateway user and a runner user on
 *   the authenticated server the runner uses (what authentication and permissions cost).
 *
 * Run: `pnpm bench` (or `node --conditions=@paddock/source --import tsx bench/runner.ts`).
 * PADDOCK_BENCH_CREATES (default 200), PADDOCK_BENCH_BURST (50), PADDOCK_BENCH_EXECS (200),
 * PADDOCK_BENCH_EXEC_GROUP (8) and PADDOCK_BENCH_EXEC_IDLE_MS (500): the 100m rows' exec pattern.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { SandboxStateEventSchema, subjects, type SandboxState } from '@paddock/contracts';
import { BARE_BWRAP_ROOT, latencyStats, report, row, startNats, timeSequential, type BenchRow, type LatencyStats } from '@paddock/testing';
import { LocalBackend } from '../src/backend/local';
import { runnerTreeName } from '../src/backend/local/cgroups';
import { startRunner } from '../src/runner';
import { RunnerTestClient } from '../test/support/runner-client';

const CREATES = Number(process.env.PADDOCK_BENCH_CREATES ?? 200);
const BURST = Number(process.env.PADDOCK_BENCH_BURST ?? 50);
const EXECS = Number(process.env.PADDOCK_BENCH_EXECS ?? 200);
const ORG = 'org-bench';
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

async function bwrapTrue(): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const p = spawn(
      '/usr/bin/bwrap',
      [...BARE_BWRAP_ROOT, '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--unshare-all', '--die-with-parent', '/bin/true'],
      { stdio: 'ignore' },
    );
    p.once('error', reject);
    p.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`bwrap exited ${code}`))));
  });
}

/** Request/reply between `requester` and an echo served on `subject` by `responder`, in rounds. */
async function requestReply(responder: NatsConnection, requester: NatsConnection, subject: string): Promise<number[]> {
  const sub = responder.subscribe(subject, { callback: (_e, m) => void m.respond(m.data) });
  await responder.flush();
  const samples = await timeSequential(() => requester.request(subject, 'x'), 250, 25);
  sub.unsubscribe();
  return samples;
}

/**
 * The same echo with and without authentication, alternating rounds on two servers so that both
 * see the same machine load: open server (anonymous) vs the authenticated one (runner user
 * answering under `allow_responses`, gateway user requesting under its own inbox prefix).
 */
async function natsAuthCost(authed: Awaited<ReturnType<typeof startNats>>): Promise<{ open: LatencyStats; auth: LatencyStats }> {
  const openServer = await startNats({ jetstream: false, auth: false });
  const [o1, o2] = await Promise.all([openServer.connectHarness(), openServer.connectHarness()]);
  const [responder, requester] = await Promise.all([authed.connectAs('runner', 'bench-echo'), authed.connectAs('gateway', 'gateway')]);
  const open: number[] = [];
  const auth: number[] = [];
  for (let round = 0; round < 4; round++) {
    open.push(...(await requestReply(o1, o2, subjects.runnerRpc('bench-echo', 'get'))));
    auth.push(...(await requestReply(responder, requester, subjects.runnerRpc('bench-echo', 'get'))));
  }
  await Promise.all([o1, o2, responder, requester].map((c) => c.close()));
  await openServer.stop();
  return { open: latencyStats(open), auth: latencyStats(auth) };
}

const GROUP = Number(process.env.PADDOCK_BENCH_EXEC_GROUP ?? 8);
const GROUP_IDLE_MS = Number(process.env.PADDOCK_BENCH_EXEC_IDLE_MS ?? 500);

interface CpuCgroup {
  /** cpu.stat of the sandbox's cpu cgroup (throttling counters). */
  stat: string;
  /** Its CPU use in ns (cpuacct.usage: also counts the exec daemon, which sits outside the cpu cgroup). */
  usage: string;
}

function sandboxCgroups(runnerId: string, stateDir: string, id: string): CpuCgroup {
  const tree = runnerTreeName(runnerId, stateDir);
  return { stat: join('/sys/fs/cgroup/cpu/paddock', tree, id, 'cpu.stat'), usage: join('/sys/fs/cgroup/cpuacct/paddock', tree, id, 'cpuacct.usage') };
}

/** CPU share (cpuacct) and throttling of a sandbox across `fn`, as a row note. */
async function withCounters<T>(cg: CpuCgroup, fn: () => Promise<T>): Promise<{ value: T; note: string }> {
  const counters = (): Record<string, number> =>
    Object.fromEntries(readFileSync(cg.stat, 'utf8').trim().split('\n').map((l) => [l.split(' ')[0] ?? '', Number(l.split(' ')[1])]));
  const c0 = counters();
  const u0 = Number(readFileSync(cg.usage, 'utf8'));
  const t0 = process.hrtime.bigint();
  const value = await fn();
  const wallNs = Number(process.hrtime.bigint() - t0);
  const c1 = counters();
  const d = (k: string): number => (c1[k] ?? 0) - (c0[k] ?? 0);
  const share = (Number(readFileSync(cg.usage, 'utf8')) - u0) / wallNs;
  const note = `${(share * 100).toFixed(1)} % of a CPU on average; throttled in ${d('nr_throttled')}/${d('nr_periods')} periods (${(d('throttled_time') / 1e6).toFixed(0)} ms), bursts ${d('nr_bursts')}; load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`;
  return { value, note };
}

/**
 * Exec latency in a 100m sandbox beside a 1-CPU one: groups of execs separated by idle time,
 * the two sandboxes taking turns (what an agent running a few commands between thoughts does),
 * then the same execs back to back in the 100m sandbox alone.
 */
async function smallSandboxExecs(
  exec: (id: string) => Promise<unknown>,
  big: string,
  small: string,
  cg: CpuCgroup,
): Promise<{ paced: LatencyStats; pacedBig: LatencyStats; pacedNote: string; tight: LatencyStats; tightNote: string }> {
  const group = async (id: string, out: number[]): Promise<void> => {
    await new Promise((r) => setTimeout(r, GROUP_IDLE_MS));
    for (let i = 0; i < GROUP; i++) {
      const t0 = process.hrtime.bigint();
      await exec(id);
      out.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  };
  await group(small, []);
  const pacedSmall: number[] = [];
  const pacedBig: number[] = [];
  const paced = await withCounters(cg, async () => {
    while (pacedSmall.length < EXECS) {
      await group(big, pacedBig);
      await group(small, pacedSmall);
    }
  });
  const tight = await withCounters(cg, () => timeSequential(() => exec(small), EXECS, 10));
  return { paced: latencyStats(pacedSmall), pacedBig: latencyStats(pacedBig), pacedNote: paced.note, tight: latencyStats(tight.value), tightNote: tight.note };
}

async function main(): Promise<void> {
  const nats = await startNats({ jetstream: false });
  const runnerId = `bench-${process.pid}`;
  const stateDir = join('/tmp/paddock-runner-bench', runnerId);
  mkdirSync(stateDir, { recursive: true, mode: 0o755 });
  const backend = new LocalBackend({ runnerId, stateDir });
  const runner = await startRunner({
    natsUrl: nats.url,
    natsCredsFile: await nats.credsFile('runner', runnerId),
    backend,
    identity: { runnerId, organizationId: ORG },
    heartbeatIntervalMs: 5_000,
    capacity: { cpuMillis: 1_000_000, memoryBytes: 1024 ** 4, sandboxes: 1_000 },
    caps: { pidsMax: 256, diskBytes: 256 * 1024 ** 2, openFilesMax: 1024 },
    streamIdleTimeoutMs: 30_000,
    log: quiet,
  });
  const nc = await nats.connectAs('gateway', 'gateway');
  const client = new RunnerTestClient(nc, runnerId);

  // Sandbox state events → waiters keyed by sandbox id and state.
  const waiters = new Map<string, () => void>();
  nc.subscribe(subjects.sandboxState(runnerId), {
    callback: (_e, m) => {
      const evt = SandboxStateEventSchema.parse(m.json());
      waiters.get(`${evt.sandboxId}/${evt.state}`)?.();
    },
  });
  await nc.flush();
  const stateReached = (sandboxId: string, state: SandboxState): Promise<void> =>
    new Promise((resolve) => waiters.set(`${sandboxId}/${state}`, resolve));
  const spec: { containers: { name: string; image: string; resources: { cpu: string; memory: string } }[]; maxLifetimeSeconds: number; network?: { denyEgress: boolean } } = {
    containers: [{ name: 'main', image: 'paddock/base', resources: { cpu: '100m', memory: '64Mi' } }],
    maxLifetimeSeconds: 600,
  };
  // The default policy allows egress (the sandbox's own netns + veth + nft chain); denied egress
  // keeps bwrap's own loopback-only namespace. Both are measured, interleaved.
  const deniedSpec = { ...spec, network: { denyEgress: true } };
  let n = 0;
  const createToRunning = async (withSpec: typeof spec = spec): Promise<number> => {
    const id = `b${++n}`;
    const running = stateReached(id, 'STATE_RUNNING');
    const t0 = process.hrtime.bigint();
    await client.call('create', { sandboxId: id, organizationId: ORG, spec: withSpec });
    await running;
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    waiters.delete(`${id}/STATE_RUNNING`);
    return ms;
  };
  const stopAll = async (): Promise<void> => {
    const live = runner.service.list({ organizationId: ORG });
    await Promise.all(live.map((s) => client.call('delete', { sandboxId: s.sandboxId, organizationId: ORG, gracePeriodSeconds: 0 })));
    while (runner.service.capacity().sandboxesRunning > 0) await new Promise((r) => setTimeout(r, 20));
  };

  const progress = (msg: string): boolean => process.stderr.write(`[bench] ${msg}\n`);
  progress('runner started; measuring floors');
  // Floors.
  const bwrap = latencyStats(await timeSequential(bwrapTrue, 100, 10));
  const rr = await natsAuthCost(nats);
  // The transport floor of every figure below is the authenticated request/reply the platform uses.
  const natsRr = rr.auth;

  progress(`floors done; ${CREATES} sequential creates`);
  // create → RUNNING, sequential (each sandbox is stopped before the next, so the runner stays small).
  const seq: number[] = [];
  const seqDenied: number[] = [];
  for (let i = 0; i < CREATES; i++) {
    seq.push(await createToRunning());
    await stopAll();
    seqDenied.push(await createToRunning(deniedSpec));
    await stopAll();
  }
  const seqStats = latencyStats(seq);
  const deniedStats = latencyStats(seqDenied);

  progress(`burst of ${BURST}`);
  // create → RUNNING under a burst of concurrent creates.
  const burst = latencyStats(await Promise.all(Array.from({ length: BURST }, () => createToRunning())));
  await stopAll();

  progress(`${EXECS} execs`);
  // exec `true` round trip over NATS into a running sandbox with one CPU. Every exec'd command is
  // charged to its sandbox's CPU quota, so a tight loop of execs in a 100m sandbox is held to its
  // 10 ms per 100 ms period: that case is printed too, as what a small sandbox gets.
  await createToRunning({ ...spec, containers: [{ name: 'main', image: 'paddock/base', resources: { cpu: '1', memory: '64Mi' } }] });
  const target = `b${n}`;
  const exec = latencyStats(
    await timeSequential(() => client.call('exec', { sandboxId: target, organizationId: ORG, argv: ['true'] }), EXECS, 10),
  );
  // The same exec straight into the backend (no NATS, no runner): isolates the runner's overhead.
  const direct = latencyStats(await timeSequential(() => backend.exec(target, { argv: ['true'] }), EXECS, 10));
  await createToRunning();
  const small = `b${n}`;
  const small100m = await smallSandboxExecs(
    (id) => client.call('exec', { sandboxId: id, organizationId: ORG, argv: ['true'] }),
    target,
    small,
    sandboxCgroups(runnerId, stateDir, small),
  );
  await stopAll();

  const rows: BenchRow[] = [
    row('floor: bare bwrap /bin/true spawn p50', 'ms', [bwrap.p50]),
    row('floor: bare bwrap /bin/true spawn p99', 'ms', [bwrap.p99]),
    row('floor: NATS request/reply p50, no authentication', 'ms', [rr.open.p50]),
    row('floor: NATS request/reply p99, no authentication', 'ms', [rr.open.p99]),
    row('NATS request/reply p50, with authentication (gateway user → runner user)', 'ms', [rr.auth.p50], {
      floor: { name: 'same without authentication p50', median: rr.open.p50 },
    }),
    row('NATS request/reply p99, with authentication', 'ms', [rr.auth.p99], { floor: { name: 'same without authentication p99', median: rr.open.p99 } }),
    row(`create → RUNNING p50 (${CREATES} sequential)`, 'ms', [seqStats.p50], {
      floor: { name: 'bwrap spawn p50 + NATS rr p50', median: bwrap.p50 + natsRr.p50 },
      target: '≤ 3× floor',
      note: 'default policy: egress allowed, so the sandbox gets its own netns + veth + nft chain',
    }),
    row(`create → RUNNING p99 (${CREATES} sequential)`, 'ms', [seqStats.p99], {
      floor: { name: 'bwrap spawn p99 + NATS rr p99', median: bwrap.p99 + natsRr.p99 },
      target: '< 60 ms',
    }),
    row(`create → RUNNING p50 (${CREATES} sequential), egress denied (loopback-only netns)`, 'ms', [deniedStats.p50], {
      floor: { name: 'bwrap spawn p50 + NATS rr p50', median: bwrap.p50 + natsRr.p50 },
      note: `p99 ${deniedStats.p99.toFixed(2)}`,
    }),
    row('egress netns cost on create → RUNNING p50 (default egress − denied)', 'ms', [seqStats.p50 - deniedStats.p50]),
    row(`create → RUNNING p50 (burst of ${BURST})`, 'ms', [burst.p50], { floor: { name: 'bwrap spawn p50', median: bwrap.p50 } }),
    row(`create → RUNNING p99 (burst of ${BURST})`, 'ms', [burst.p99], { floor: { name: 'bwrap spawn p99', median: bwrap.p99 } }),
    row(`backend exec true, direct (no NATS) p50, 1-CPU sandbox`, 'ms', [direct.p50]),
    row(`exec true round trip over NATS p50 (${EXECS}), 1-CPU sandbox`, 'ms', [exec.p50], {
      floor: { name: 'direct backend exec p50 + NATS rr p50', median: direct.p50 + natsRr.p50 },
      target: '< 5 ms',
    }),
    row(`exec true round trip over NATS p99 (${EXECS}), 1-CPU sandbox`, 'ms', [exec.p99], {
      floor: { name: 'direct backend exec p99 + NATS rr p99', median: direct.p99 + natsRr.p99 },
    }),
    // The platform's part of an exec runs outside the sandbox's quota; only the command is held to
    // it. Execs come in groups after idle time, so the 100m sandbox stays under its quota on
    // average (the note says how far); both sandboxes take turns in the same minutes.
    row(`exec true over NATS p50, 100m sandbox, groups of ${GROUP} after ${GROUP_IDLE_MS} ms idle`, 'ms', [small100m.paced.p50], {
      floor: { name: 'same pattern, 1-CPU sandbox p50 (alternating)', median: small100m.pacedBig.p50 },
      target: '≤ 2×',
      note: small100m.pacedNote,
    }),
    row(`exec true over NATS p99, 100m sandbox, groups of ${GROUP} after ${GROUP_IDLE_MS} ms idle`, 'ms', [small100m.paced.p99], {
      floor: { name: 'same pattern, 1-CPU sandbox p99 (alternating)', median: small100m.pacedBig.p99 },
      target: '≤ 2×',
    }),
    // Back to back, a 100m sandbox asks for more than its 10 ms per 100 ms period: it is held to
    // its quota by design, and no setting should hide that.
    row(`exec true over NATS p99 (${EXECS}), 100m sandbox, back to back (over its quota)`, 'ms', [small100m.tight.p99], {
      floor: { name: 'same exec, 1-CPU sandbox p99', median: exec.p99 },
      note: small100m.tightNote,
    }),
  ];
  report('runner-service', rows);

  await nc.close();
  await runner.stop();
  await nats.stop();
  rmSync(stateDir, { recursive: true, force: true });
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

/**
 * Density benchmark: how many idle sandboxes one runner keeps RUNNING at once on this machine
 * with the platform still responsive, what the platform's own processes cost per sandbox in
 * memory (PSS), and what a small CPU quota does to an exec's latency. Everything goes through the
 * runner over NATS (create, exec, delete), as the gateway drives it; capacity and per-sandbox
 * caps are the runner's defaults (`parseRunnerEnv`), so a default that stops the ramp shows here.
 *
 * - Ramp: sandboxes requesting 10m / 32Mi under 1 CPU / 256Mi limits, created in batches up to
 *   DENSITY_SANDBOXES; exec `true` p50 into an early sandbox at idle (a few sandboxes) and again
 *   with all of them running (target: at most twice the idle figure).
 * - PSS: per sandbox, the sum of `/proc/<pid>/smaps_rollup` Pss over its platform processes (the
 *   supervisor, bwrap, the exec daemon: every process of its tree that is not the workload), the
 *   zygote's share spread over all sandboxes, beside a bare `bwrap ... sleep infinity` measured
 *   in the same run.
 * - Exec latency under a small CPU quota is the runner bench's (`runner.ts`: execs paced under the
 *   quota, and back to back over it, beside a 1-CPU sandbox).
 *
 *   node --conditions=@paddock/source --import tsx bench/density.ts
 *
 * Env: DENSITY_SANDBOXES (default 250), DENSITY_BATCH (25), DENSITY_EXECS (200), DENSITY_CPU_MILLIS (the
 * runner's CPU capacity: by default the host's, raised to what the ramp's requests sum to).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { SandboxStateEventSchema, subjects, type SandboxSpecInput } from '@paddock/contracts';
import { BARE_BWRAP_ROOT, latencyStats, report, row, startNats, timeSequential, type BenchRow } from '@paddock/testing';
import { LocalBackend } from '../src/backend/local';
import { parseRunnerEnv } from '../src/config/env';
import { startRunner } from '../src/runner';
import { RunnerTestClient } from '../test/support/runner-client';

const SANDBOXES = Number(process.env.DENSITY_SANDBOXES ?? 250);
const BATCH = Number(process.env.DENSITY_BATCH ?? 25);
const EXECS = Number(process.env.DENSITY_EXECS ?? 200);
const ORG = 'org-density';
const KiB = 1024;
const quiet = { info: () => undefined, warn: () => undefined, error: (m: string) => process.stderr.write(`[runner] ${m}\n`) };
const progress = (msg: string): boolean => process.stderr.write(`[density] ${msg} (load ${loadavg()[0]?.toFixed(2)})\n`);

const idleSpec = (cpu = '1', request = '10m'): SandboxSpecInput => ({
  containers: [
    {
      name: 'main',
      image: 'paddock/base',
      command: ['sleep', 'infinity'],
      resourceRequirements: { requests: { cpu: request, memory: '32Mi' }, limits: { cpu, memory: '256Mi' } },
    },
  ],
  maxLifetimeSeconds: 3600,
  network: { denyEgress: true },
});

/** Pss of one process in KiB (0 if it is gone). */
function pssKiB(pid: number): number {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

function children(pid: number): number[] {
  try {
    const tasks = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return tasks ? tasks.split(' ').map(Number) : [];
  } catch {
    return [];
  }
}

function exe(pid: number): string {
  try {
    return readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return '';
  }
}

function parentPid(pid: number): number {
  try {
    return Number(/\) \S+ (\d+)/.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Every process of the tree rooted at `pid`. */
function tree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) out.push(...children(out[i] as number));
  return out;
}

/** The platform's processes of a tree: the supervisor's interpreter (and its forks) and bwrap; not the workload. */
const isPlatform = (pid: number): boolean => /python|bwrap/.test(exe(pid));

/** Context switches of one process so far (voluntary + involuntary; 0 if it is gone): each is a wakeup. */
function contextSwitches(pid: number): number {
  try {
    const st = readFileSync(`/proc/${pid}/status`, 'utf8');
    return [...st.matchAll(/^(?:non)?voluntary_ctxt_switches:\s+(\d+)/gm)].reduce((a, m) => a + Number(m[1]), 0);
  } catch {
    return 0;
  }
}

async function bareBwrapPss(n: number): Promise<number[]> {
  const kids: ChildProcess[] = [];
  for (let i = 0; i < n; i++) {
    kids.push(
      spawn('/usr/bin/bwrap', [...BARE_BWRAP_ROOT, '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--unshare-all', '--die-with-parent', 'sleep', 'infinity'], {
        stdio: 'ignore',
      }),
    );
  }
  await new Promise((r) => setTimeout(r, 500));
  const per = kids.map((k) => tree(k.pid as number).filter((p) => /bwrap/.test(exe(p))).reduce((a, p) => a + pssKiB(p), 0));
  for (const k of kids) k.kill('SIGKILL');
  return per;
}

async function main(): Promise<void> {
  const nats = await startNats({ jetstream: false });
  const runnerId = `density-${process.pid}`;
  const stateDir = join('/tmp/paddock-density-bench', runnerId);
  mkdirSync(stateDir, { recursive: true, mode: 0o755 });
  const env = parseRunnerEnv({});
  if (!env.ok) throw new Error(env.message);
  const defaults = env.env;
  const capacity = {
    // 250 × 10m is more than this machine's 2 cores: requests count as a scheduler counts them,
    // so the operator states the overcommit (DENSITY_CPU_MILLIS; default: just what the ramp needs).
    cpuMillis: Math.max(defaults.PADDOCK_CAPACITY_CPU_MILLIS, Number(process.env.DENSITY_CPU_MILLIS ?? (SANDBOXES + 10) * 10 + 2000)),
    memoryBytes: defaults.PADDOCK_CAPACITY_MEMORY_BYTES,
    sandboxes: defaults.PADDOCK_CAPACITY_SANDBOXES,
  };
  const backend = new LocalBackend({ runnerId, stateDir });
  const runner = await startRunner({
    natsUrl: nats.url,
    natsCredsFile: await nats.credsFile('runner', runnerId),
    backend,
    identity: { runnerId, organizationId: ORG },
    heartbeatIntervalMs: 5_000,
    capacity,
    caps: { pidsMax: defaults.PADDOCK_SANDBOX_PIDS_MAX, diskBytes: defaults.PADDOCK_SANDBOX_DISK_BYTES, openFilesMax: defaults.PADDOCK_SANDBOX_OPEN_FILES_MAX },
    streamIdleTimeoutMs: 30_000,
    log: quiet,
  });
  const nc = await nats.connectAs('gateway', 'gateway');
  const client = new RunnerTestClient(nc, runnerId, 120_000);
  const ended = new Map<string, string>();
  const running = new Set<string>();
  const waiters = new Map<string, () => void>();
  nc.subscribe(subjects.sandboxState(runnerId), {
    callback: (_e, m) => {
      const evt = SandboxStateEventSchema.parse(m.json());
      if (evt.state === 'STATE_RUNNING') running.add(evt.sandboxId);
      if (evt.state === 'STATE_FAILED' || evt.state === 'STATE_COMPLETED') {
        running.delete(evt.sandboxId);
        ended.set(evt.sandboxId, `${evt.state} ${evt.reason ?? ''} ${evt.message ?? ''}`);
      }
      if (evt.state !== 'STATE_PENDING' && evt.state !== 'STATE_CREATING') waiters.get(evt.sandboxId)?.();
    },
  });
  await nc.flush();

  /** Creates a sandbox and waits until it runs or ends; returns an error message if it did not run. */
  const create = async (id: string, spec: SandboxSpecInput): Promise<string | undefined> => {
    const settled = new Promise<void>((r) => waiters.set(id, r));
    try {
      await client.call('create', { sandboxId: id, organizationId: ORG, spec });
    } catch (e) {
      waiters.delete(id);
      return (e as Error).message;
    }
    await Promise.race([settled, new Promise((r) => setTimeout(r, 60_000))]);
    waiters.delete(id);
    return running.has(id) ? undefined : (ended.get(id) ?? 'not RUNNING after 60 s');
  };
  const execTrue = (id: string) => () => client.call('exec', { sandboxId: id, organizationId: ORG, argv: ['true'] });
  const rows: BenchRow[] = [];
  try {
    progress('floors: bare bwrap sleep infinity PSS');
    const bare = latencyStats(await bareBwrapPss(10));


    // The ramp.
    progress(`ramp to ${SANDBOXES} idle sandboxes in batches of ${BATCH}`);
    const failures: string[] = [];
    const first = 'd-0';
    let idle = latencyStats([]);
    for (let i = 0; i < SANDBOXES; i += BATCH) {
      const ids = Array.from({ length: Math.min(BATCH, SANDBOXES - i) }, (_, k) => `d-${i + k}`);
      const errs = await Promise.all(ids.map((id) => create(id, idleSpec())));
      errs.forEach((e, k) => e && failures.push(`${ids[k]}: ${e}`));
      if (i === 0) {
        await new Promise((r) => setTimeout(r, 1000));
        idle = latencyStats(await timeSequential(execTrue(first), EXECS, 20));
      }
      progress(`${running.size} running, ${failures.length} failed`);
      if (failures.length > 0 && failures.length >= BATCH) break;
    }
    await new Promise((r) => setTimeout(r, 3000));
    const reached = running.size;
    const top = latencyStats(await timeSequential(execTrue(first), EXECS, 20));
    // Exec into sandboxes spread over the whole ramp (their exec daemons start on first use: warm them first).
    const spread = [...running].filter((id) => id.startsWith('d-')).filter((_, k) => k % 10 === 0);
    for (const id of spread) await execTrue(id)();
    const spreadSamples: number[] = [];
    for (let r = 0; r < Math.ceil(EXECS / spread.length); r++) for (const id of spread) spreadSamples.push(...(await timeSequential(execTrue(id), 1, 0)));
    const topSpread = latencyStats(spreadSamples);
    const load = loadavg()[0] ?? Number.NaN;
    rows.push(
      row(`idle sandboxes RUNNING at once (10m/32Mi requests, 1 CPU/256Mi limits), of ${SANDBOXES} asked`, 'sandboxes', [reached], {
        target: `≥ ${SANDBOXES}`,
        note: `${failures.length} failed${failures.length ? `: ${failures.slice(0, 3).join('; ')}` : ''}; capacity ${capacity.cpuMillis}m/${capacity.sandboxes} sandboxes; load ${load.toFixed(2)}`,
      }),
      row(`exec true p50 (${EXECS}) with ${reached} idle sandboxes running`, 'ms', [top.p50], {
        floor: { name: `same sandbox, ${BATCH} running (idle)`, median: idle.p50 },
        target: '≤ 2×',
        note: `p99 ${top.p99.toFixed(2)} vs idle p99 ${idle.p99.toFixed(2)}`,
      }),
      row(`exec true p50 (${spreadSamples.length}) over ${spread.length} sandboxes across the ramp, ${reached} running`, 'ms', [topSpread.p50], {
        floor: { name: `one sandbox, ${BATCH} running (idle)`, median: idle.p50 },
        target: '≤ 2×',
        note: `p99 ${topSpread.p99.toFixed(2)}`,
      }),
    );

    // Platform memory per idle sandbox: the spread ones (and the first) have an exec daemon, the rest never exec'd.
    progress('PSS');
    const perBox: number[] = [];
    const perBoxExecd: number[] = [];
    const spreadSet = new Set(spread.concat(first));
    const supervisorPids: number[] = [];
    for (const id of running) {
      let sup: number;
      try {
        sup = Number(readFileSync(join(stateDir, 'sandboxes', id, 'supervisor.pid'), 'utf8'));
      } catch {
        continue;
      }
      supervisorPids.push(sup);
      const kib = tree(sup)
        .filter(isPlatform)
        .reduce((a, p) => a + pssKiB(p), 0);
      (spreadSet.has(id) ? perBoxExecd : perBox).push(kib);
    }
    // The zygote (the supervisors' parent) is shared by all of them: its PSS is spread over the sandboxes.
    // Wakeups of the idle sandboxes' platform processes over 5 s: an idle supervisor or exec daemon
    // should sleep until something happens, not on a timer (hundreds of timers add up).
    const platformPids = supervisorPids.flatMap((sup) => tree(sup).filter(isPlatform));
    const before = platformPids.map(contextSwitches);
    await new Promise((r) => setTimeout(r, 5000));
    const woken = platformPids.reduce((a, pid, k) => a + Math.max(0, contextSwitches(pid) - (before[k] ?? 0)), 0);
    rows.push(
      row(`platform wakeups per idle sandbox per second (${supervisorPids.length} sandboxes, ${platformPids.length} processes, 5 s)`, '/s', [woken / 5 / Math.max(1, supervisorPids.length)], {
        note: 'context switches of the supervisors, bwrap and exec daemons, spares included',
      }),
    );
    const zygotePid = supervisorPids.length ? parentPid(supervisorPids[0] as number) : 0;
    const zygoteShare = zygotePid ? pssKiB(zygotePid) / Math.max(1, running.size) : 0;
    const withExecd = latencyStats(perBoxExecd.map((k) => (k + zygoteShare) / KiB));
    const noExecd = latencyStats(perBox.map((k) => (k + zygoteShare) / KiB));
    rows.push(
      row(`platform PSS per idle sandbox with its exec daemon (supervisor + bwrap + execd + zygote share), ${perBoxExecd.length} sandboxes`, 'MiB', [withExecd.p50], {
        floor: { name: 'bare bwrap sleep infinity (bwrap processes) p50', median: bare.p50 / KiB },
        target: '< 8 MiB',
        note: `max ${withExecd.max.toFixed(2)}; zygote share ${(zygoteShare / KiB).toFixed(3)} MiB`,
      }),
      row(`platform PSS per idle sandbox never exec'd into (supervisor + bwrap + zygote share), ${perBox.length} sandboxes`, 'MiB', [noExecd.p50], {
        floor: { name: 'bare bwrap sleep infinity (bwrap processes) p50', median: bare.p50 / KiB },
        target: '< 8 MiB',
        note: `max ${noExecd.max.toFixed(2)}`,
      }),
      row('floor: bare bwrap --unshare-all sleep infinity PSS (bwrap processes)', 'MiB', [bare.p50 / KiB]),
    );
  } finally {
    progress('teardown');
    const live = runner.service.list({ organizationId: ORG });
    for (let i = 0; i < live.length; i += 50) {
      await Promise.all(live.slice(i, i + 50).map((s) => client.call('delete', { sandboxId: s.sandboxId, organizationId: ORG, gracePeriodSeconds: 0 }).catch(() => undefined)));
    }
    const until = Date.now() + 120_000;
    while (runner.service.capacity().sandboxesRunning > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    await nc.close();
    await runner.stop();
    await nats.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
  report('runner-density', rows);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

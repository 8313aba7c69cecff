import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time by process group over a stretch of a bench, read from /proc: the nanosecond run time
 * of every thread (`task/<tid>/schedstat`; utime/stime come in 10 ms ticks, too coarse for a
 * burst of half a second spread over many processes). A process alive at both reads counts what
 * it ran between them; one that starts or ends within the stretch does not count, so the figures
 * are a floor of what was spent.
 */
export interface CpuGroups {
  gateway: number;
  runner: number;
  /** The runner's descendants: sandboxes' exec daemons and their spawners, the supervisors (python), the rest (bwrap, the sandboxes' own). */
  execDaemons: number;
  supervisors: number;
  sandboxesOther: number;
  postgres: number;
  nats: number;
  client: number;
  /** Kernel threads (kworkers: netns teardown, pool refills' namespaces) of the whole machine, whoever caused them. */
  kernelThreads: number;
  /**
   * Children the groups above reaped within the stretch (their cutime + cstime, 10 ms ticks): the
   * whole lifetime's CPU of every process that ended in it (a take's or a refill's helpers that no
   * read of /proc catches alive, but also a deleted sandbox's processes, Postgres backends), so
   * an upper bound of what the stretch's short-lived processes cost.
   */
  reapedChildren: number;
  /** Every other process alive at both reads: not the bench's (other helpers' load, system daemons). */
  otherProcesses: number;
  /**
   * Interrupt and softirq time of the machine (/proc/stat irq + softirq, 10 ms ticks): loopback
   * TCP (HTTP, NATS, Postgres) is processed there, billed to no process.
   */
  interrupts: number;
  /** Every CPU of the machine (/proc/stat), other helpers' load included. */
  machine: number;
}

export interface CpuSelectors {
  gatewayPid: number;
  runnerPid: number;
  natsPid: number;
  /** The bench's Postgres cluster: its postmaster and every backend it forked. */
  postgresDataDir: string;
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** CPU ms the process's threads ran so far. */
function runMs(pid: string): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // thread gone meanwhile
    }
  }
  return ns / 1e6;
}

interface Proc {
  pid: number;
  ppid: number;
  comm: string;
  ms: number;
  /** Reaped children's CPU so far (cutime + cstime). */
  childrenMs: number;
}

function readProcs(withTimes: boolean): Map<number, Proc> {
  const out = new Map<number, Proc>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // comm is parenthesised and may hold spaces: fields resume after the last ')'.
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const f = stat.slice(close + 2).split(' ');
      out.set(Number(name), {
        pid: Number(name),
        ppid: Number(f[1]),
        comm,
        ms: withTimes ? runMs(name) : 0,
        childrenMs: (Number(f[13]) + Number(f[14])) * TICK_MS,
      });
    } catch {
      // gone between readdir and read
    }
  }
  return out;
}

/** The machine's CPU line of /proc/stat: user nice system idle iowait irq softirq steal, in ticks. */
function cpuLine(): number[] {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  return line.trim().split(/\s+/).slice(1, 9).map(Number);
}

/** Busy CPU ms of the whole machine so far (/proc/stat: all but idle and iowait). */
export function machineBusyMs(): number {
  const v = cpuLine();
  return (
    ((v[0] ?? 0) + (v[1] ?? 0) + (v[2] ?? 0) + (v[5] ?? 0) + (v[6] ?? 0) + (v[7] ?? 0)) * TICK_MS
  );
}

/** Interrupt and softirq CPU ms of the machine so far. */
function interruptMs(): number {
  const v = cpuLine();
  return ((v[5] ?? 0) + (v[6] ?? 0)) * TICK_MS;
}

/** This process's child of that name (the throwaway NATS server), -1 when none. */
export function childPid(comm: string): number {
  for (const p of readProcs(false).values()) {
    if (p.comm === comm && p.ppid === process.pid) return p.pid;
  }
  return -1;
}

function descends(procs: Map<number, Proc>, pid: number, root: number): boolean {
  for (let p = procs.get(pid), hops = 0; p && hops < 64; p = procs.get(p.ppid), hops++) {
    if (p.pid === root) return true;
  }
  return false;
}

/** The cluster's postmaster: the first line of its data directory's postmaster.pid. */
function postmasterOf(dataDir: string): number {
  try {
    return Number(readFileSync(`${dataDir}/postmaster.pid`, 'utf8').split('\n')[0]);
  } catch {
    return -1;
  }
}

function classify(procs: Map<number, Proc>, sel: CpuSelectors): Map<number, keyof CpuGroups> {
  const postmaster = postmasterOf(sel.postgresDataDir);
  const out = new Map<number, keyof CpuGroups>();
  for (const p of procs.values()) {
    let g: keyof CpuGroups | undefined;
    if (p.pid === process.pid) g = 'client';
    else if (p.pid === sel.natsPid) g = 'nats';
    else if (p.pid === sel.runnerPid) g = 'runner';
    else if (p.pid === 2 || p.ppid === 2) g = 'kernelThreads';
    else if (descends(procs, p.pid, sel.gatewayPid)) g = 'gateway';
    else if (descends(procs, p.pid, sel.runnerPid)) {
      g = p.comm.startsWith('paddock-')
        ? 'execDaemons'
        : p.comm.startsWith('python')
          ? 'supervisors'
          : 'sandboxesOther';
    } else if (postmaster > 0 && descends(procs, p.pid, postmaster)) g = 'postgres';
    if (g) out.set(p.pid, g);
  }
  return out;
}

/** Starts a stretch; the returned function ends it and gives the CPU ms each group used. */
export function startCpuStretch(sel: CpuSelectors): () => CpuGroups {
  const before = readProcs(true);
  const m0 = machineBusyMs();
  const i0 = interruptMs();
  return () => {
    const after = readProcs(true);
    const m1 = machineBusyMs();
    const i1 = interruptMs();
    const groups = classify(after, sel);
    const sums: CpuGroups = {
      gateway: 0,
      runner: 0,
      execDaemons: 0,
      supervisors: 0,
      sandboxesOther: 0,
      postgres: 0,
      nats: 0,
      client: 0,
      kernelThreads: 0,
      reapedChildren: 0,
      otherProcesses: 0,
      interrupts: i1 - i0,
      machine: m1 - m0,
    };
    for (const [pid, a] of after) {
      const b = before.get(pid);
      if (!b || a.comm !== b.comm) continue;
      const g = groups.get(pid) ?? 'otherProcesses';
      sums[g] += a.ms - b.ms;
      // A reaped child's time is counted once, by the group of the parent that reaped it.
      if (g !== 'otherProcesses' && g !== 'kernelThreads') sums.reapedChildren += a.childrenMs - b.childrenMs;
    }
    return sums;
  };
}

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * Per-runner cgroup tree: `<root>/<ctrl>/paddock/<tree>/<sandboxId>` on cgroup v1 (cpu, memory,
 * pids) or `<root>/paddock/<tree>/<sandboxId>` on a pure cgroup v2 host, where `<tree>` names
 * this runner installation (see `runnerTreeName`). Supervisors live in a `_supervisors` sibling
 * (pids controller only on v1) so that everything the backend ever starts can be found, and
 * killed, by walking this tree.
 */
export type CgroupMode = 'v1' | 'v2';

/** One CPU per 100 ms period while a sandbox launches (see `CgroupTree.create`). */
const LAUNCH_QUOTA_US = 100_000;

/**
 * The CFS period of every sandbox (Kubernetes' too). A shorter one would shorten the longest stall
 * of a sandbox that ran out of quota (period − quota: 90 ms at 100m) but not remove it, and costs a
 * bandwidth timer per period per sandbox; with 2 CPUs each taking 5 ms slices of the group's
 * quota (`sched_cfs_bandwidth_slice_us`), a 100m sandbox on a 10 ms period would get one slice.
 */
const CFS_PERIOD_US = 100_000;

/**
 * The CFS burst of a sandbox: its steady quota, the most the kernel accepts (burst ≤ quota).
 * Every exec is the sandbox's own work (the command runs in its cpu cgroup), and a few in a row
 * cost more than 100m's 10 ms in one period: without a burst the next exec waited up to 90 ms for
 * the next period although the sandbox had been idle for seconds (bench: a 100m exec's p99 three
 * to ten times a 1-CPU sandbox's). With it a sandbox that left quota unused may spend up to one
 * more period's quota at once; the burst only refills from quota left unused, so over any second
 * the sandbox still gets its limit plus at most one burst (a busy loop at 100m: ≤ 11 % of a CPU,
 * `test/local/cpu-burst.spec.ts`). Kubernetes has no field for it: the k8s backend cannot set it.
 */
export function cfsBurstUs(steadyQuotaUs: number): number {
  return steadyQuotaUs;
}

/** The quota file and the value the supervisor writes once the workload runs. */
export interface CpuSteadyQuota {
  file: string;
  value: string;
}

export const V1_CONTROLLERS = ['pids', 'memory', 'cpu'] as const;
/**
 * v1 hierarchies a sandbox also joins when the host mounts them (after the required three, so
 * positional reads of those stay valid): the freezer pauses a sandbox, cpuacct measures its CPU
 * use where it is not co-mounted with cpu. A host without them runs sandboxes that cannot pause.
 */
export const V1_OPTIONAL_CONTROLLERS = ['freezer', 'cpuacct'] as const;
export const SUPERVISORS_GROUP = '_supervisors';
/** Cgroup names of warm slots: sandbox ids cannot start with an underscore, so they never collide. */
export const WARM_GROUP_PREFIX = '_warm-';

export interface CgroupLimits {
  cpuMillis: number;
  memoryBytes: number;
  pidsMax: number;
}

/** Detects the layout: pure v2 when the root itself is a cgroup2 mount, v1 when the controllers are mounted. */
export function detectCgroupMode(root: string): CgroupMode | undefined {
  if (existsSync(join(root, 'cgroup.controllers'))) return 'v2';
  if (V1_CONTROLLERS.every((c) => existsSync(join(root, c, 'cgroup.procs')))) return 'v1';
  return undefined;
}

/**
 * The name of a runner installation's cgroup tree: its id and a short hash of its state directory.
 * A runner id alone is not unique on a machine (every local runner is `local` by default; test
 * suites and `pnpm start` run several at once), and recovery kills whatever in its tree it does
 * not know: keyed by id alone, one runner's recovery reaped another's sandboxes. The state
 * directory is what a runner restart keeps, so a restarted runner finds its own tree again.
 */
export function runnerTreeName(runnerId: string, stateDir: string): string {
  return `${runnerId}.${createHash('sha256').update(resolve(stateDir)).digest('hex').slice(0, 8)}`;
}

export function readPids(procsFile: string): number[] {
  try {
    return readFileSync(procsFile, 'utf8')
      .split('\n')
      .filter((l) => l.length > 0)
      .map(Number);
  } catch {
    return [];
  }
}

function writeIfExists(file: string, value: string): void {
  if (existsSync(file)) writeFileSync(file, value);
}

export class RunnerCgroups {
  constructor(
    readonly mode: CgroupMode,
    readonly root: string,
    /** This runner installation's directory name under `paddock/` (`runnerTreeName`). */
    readonly tree: string,
  ) {}

  private controllers?: string[];

  /** The runner-level directories, one per hierarchy. */
  runnerDirs(): string[] {
    return this.mode === 'v1' ? this.v1Controllers().map((c) => join(this.root, c, 'paddock', this.tree)) : [join(this.root, 'paddock', this.tree)];
  }

  /** The required v1 controllers plus the optional ones mounted as hierarchies of their own. */
  private v1Controllers(): string[] {
    this.controllers ??= [...V1_CONTROLLERS, ...V1_OPTIONAL_CONTROLLERS.filter((c) => separateHierarchy(this.root, c))];
    return this.controllers;
  }

  /** The sandbox's directories; the first one's `cgroup.procs` lists every process of the sandbox. */
  boxDirs(sandboxId: string): string[] {
    return this.runnerDirs().map((d) => join(d, sandboxId));
  }

  supervisorsDir(): string {
    return join(this.runnerDirs()[0] as string, SUPERVISORS_GROUP);
  }

  oomFile(sandboxId: string): string {
    const memDir = this.mode === 'v1' ? (this.boxDirs(sandboxId)[1] as string) : (this.boxDirs(sandboxId)[0] as string);
    return join(memDir, this.mode === 'v1' ? 'memory.oom_control' : 'memory.events');
  }

  killFile(sandboxId: string): string | undefined {
    return this.mode === 'v2' ? join(this.boxDirs(sandboxId)[0] as string, 'cgroup.kill') : undefined;
  }

  procsFiles(sandboxId: string): string[] {
    return this.boxDirs(sandboxId).map((d) => join(d, 'cgroup.procs'));
  }

  /** Creates the runner-level tree (and on v2 delegates cpu, memory and pids down to it). */
  ensureRunnerTree(): void {
    for (const d of this.runnerDirs()) mkdirSync(d, { recursive: true });
    if (this.mode === 'v2') {
      for (const d of [this.root, join(this.root, 'paddock'), join(this.root, 'paddock', this.tree)]) {
        for (const c of ['cpu', 'memory', 'pids']) {
          try {
            writeIfExists(join(d, 'cgroup.subtree_control'), `+${c}`);
          } catch {
            // already delegated higher up, or unavailable: create() then fails naming the missing file
          }
        }
      }
    }
    mkdirSync(this.supervisorsDir(), { recursive: true });
  }

  /**
   * Creates the sandbox's cgroups with every limit set, before any process joins them. The CPU
   * quota starts boosted to at least one CPU for the launch (bwrap's namespace and mount setup
   * would otherwise be throttled by a small quota: 100m allows 10 ms per 100 ms period, about
   * what that setup costs); the supervisor writes the returned steady quota the moment the
   * workload's own process starts, before it is reported RUNNING.
   */
  create(sandboxId: string, limits: CgroupLimits): CpuSteadyQuota {
    this.makeDirs(sandboxId);
    return this.applyLimits(sandboxId, limits);
  }

  /** The sandbox's (or a warm slot's) cgroup directories, with no limit written yet. */
  makeDirs(id: string): void {
    for (const d of this.boxDirs(id)) mkdirSync(d, { recursive: true });
  }

  /**
   * Gives a warm slot's cgroups (holding its parked launcher) to a sandbox. cgroup v1 renames a
   * cgroup in place, processes and all; v2 refuses renames, which is why warm slots are v1 only.
   */
  rename(fromId: string, toId: string): void {
    if (this.mode !== 'v1') throw new Error('cgroup renames need cgroup v1');
    const from = this.boxDirs(fromId);
    const to = this.boxDirs(toId);
    from.forEach((d, i) => renameSync(d, to[i] as string));
  }

  /** Writes every limit of the sandbox into its existing cgroups (the CPU quota boosted, see `create`). */
  applyLimits(sandboxId: string, limits: CgroupLimits): CpuSteadyQuota {
    const steadyUs = Math.max(1000, Math.round(limits.cpuMillis * 100));
    const quotaUs = Math.max(steadyUs, LAUNCH_QUOTA_US);
    if (this.mode === 'v1') {
      const [pids, memory, cpu] = this.boxDirs(sandboxId) as [string, string, string];
      writeFileSync(join(pids, 'pids.max'), String(limits.pidsMax));
      writeFileSync(join(memory, 'memory.limit_in_bytes'), String(limits.memoryBytes));
      // No swap: memsw (memory+swap) equal to the memory limit, where the kernel accounts swap.
      writeIfExists(join(memory, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes));
      writeFileSync(join(cpu, 'cpu.cfs_period_us'), String(CFS_PERIOD_US));
      writeFileSync(join(cpu, 'cpu.cfs_quota_us'), String(quotaUs));
      // After the quota (a fresh cgroup's burst is 0, and burst ≤ quota holds both for the launch
      // boost and for the steady quota the supervisor writes later); absent before kernel 5.14.
      writeIfExists(join(cpu, 'cpu.cfs_burst_us'), String(cfsBurstUs(steadyUs)));
      return { file: join(cpu, 'cpu.cfs_quota_us'), value: String(steadyUs) };
    } else {
      const [dir] = this.boxDirs(sandboxId) as [string];
      writeFileSync(join(dir, 'pids.max'), String(limits.pidsMax));
      writeFileSync(join(dir, 'memory.max'), String(limits.memoryBytes));
      writeIfExists(join(dir, 'memory.swap.max'), '0');
      writeFileSync(join(dir, 'cpu.max'), `${quotaUs} ${CFS_PERIOD_US}`);
      writeIfExists(join(dir, 'cpu.max.burst'), String(cfsBurstUs(steadyUs)));
      return { file: join(dir, 'cpu.max'), value: `${steadyUs} ${CFS_PERIOD_US}` };
    }
  }

  pids(sandboxId: string): number[] {
    return readPids(this.procsFiles(sandboxId)[0] as string);
  }

  /** SIGKILLs every process until the cgroup is empty, then removes it. Returns false if it stayed busy. */
  async killAndRemove(sandboxId: string, timeoutMs = 10_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    const killFile = this.killFile(sandboxId);
    // Frozen processes take no signal (not even SIGKILL under the v1 freezer): thaw them first.
    thawQuietly(this.boxDirs(sandboxId));
    for (;;) {
      const pids = this.boxDirs(sandboxId).flatMap((d) => readPids(join(d, 'cgroup.procs')));
      if (pids.length === 0) break;
      if (killFile && existsSync(killFile)) writeFileSync(killFile, '1');
      for (const pid of pids) killQuietly(pid, 'SIGKILL');
      if (Date.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 2));
    }
    for (const d of this.boxDirs(sandboxId)) {
      for (;;) {
        try {
          rmdirSync(d);
          break;
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          if (code === 'ENOENT') break;
          if (code !== 'EBUSY' || Date.now() > deadline) return false;
          await new Promise((r) => setTimeout(r, 5));
        }
      }
    }
    return true;
  }

  /** Sandbox ids that have a cgroup under this runner (any hierarchy). */
  listSandboxes(): string[] {
    return this.listChildren().filter((name) => !name.startsWith(WARM_GROUP_PREFIX));
  }

  /** Warm slots' cgroups under this runner (see warm-slots.ts). */
  listWarm(): string[] {
    return this.listChildren().filter((name) => name.startsWith(WARM_GROUP_PREFIX));
  }

  private listChildren(): string[] {
    const ids = new Set<string>();
    for (const d of this.runnerDirs()) {
      if (!existsSync(d)) continue;
      for (const e of readdirSync(d, { withFileTypes: true })) {
        if (e.isDirectory() && e.name !== SUPERVISORS_GROUP) ids.add(e.name);
      }
    }
    return [...ids];
  }

  supervisorPids(): number[] {
    return readPids(join(this.supervisorsDir(), 'cgroup.procs'));
  }

  /** Removes the runner-level tree once it is empty (tests and decommissioning). */
  removeRunnerTree(): void {
    for (const d of this.runnerDirs()) {
      for (const sub of [join(d, SUPERVISORS_GROUP), d]) {
        try {
          rmdirSync(sub);
        } catch {
          // busy or already gone: the caller checks emptiness separately
        }
      }
    }
  }
}

/** True when `<root>/<ctrl>` is a mounted hierarchy that is not one of the required ones under another name. */
function separateHierarchy(root: string, ctrl: string): boolean {
  const dir = join(root, ctrl);
  if (!existsSync(join(dir, 'cgroup.procs'))) return false;
  try {
    const real = realpathSync(dir);
    return V1_CONTROLLERS.every((c) => realpathSync(join(root, c)) !== real);
  } catch {
    return false;
  }
}

function thawQuietly(dirs: string[]): void {
  for (const d of dirs) {
    try {
      writeIfExists(join(d, 'freezer.state'), 'THAWED');
      writeIfExists(join(d, 'cgroup.freeze'), '0');
    } catch {
      // gone already
    }
  }
}

export function killQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

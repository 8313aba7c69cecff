import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { V1_CONTROLLERS, detectCgroupMode, type CgroupMode } from './cgroups';
import { resolveOptions, type LocalBackendOptions } from './options';

/** One missing prerequisite: what it is, what is wrong, and the command that fixes it. */
export interface LocalPrerequisiteProblem {
  prerequisite: string;
  problem: string;
  fix: string;
}

/** What the local backend needs to know about this machine; gathered by `probeLocalBackend`. */
export interface LocalBackendFacts {
  platform: string;
  /** Undefined where the platform has no uids. */
  uid: number | undefined;
  bwrapPath: string;
  bwrapExecutable: boolean;
  pythonPath: string;
  pythonExecutable: boolean;
  cgroupRoot: string;
  cgroupMode: CgroupMode | undefined;
  /** Of cpu, memory and pids: those cgroup v2's root does not offer (always empty on v1). */
  missingV2Controllers: string[];
  /** Of cpu, memory and pids: those not mounted when there is no usable hierarchy at all. */
  missingV1Controllers: string[];
  /** `user.max_user_namespaces`; undefined when it cannot be read. */
  maxUserNamespaces: number | undefined;
  /** Debian's `kernel.unprivileged_userns_clone`, where the kernel has it. */
  unprivilegedUsernsClone: number | undefined;
  /** Ubuntu's `kernel.apparmor_restrict_unprivileged_userns`, where the kernel has it. */
  apparmorRestrictsUserns: number | undefined;
  sandboxUid: number;
  /** bubblewrap started as the sandbox uid; undefined when not tried (another problem comes first). */
  sandboxProbe: { ok: boolean; detail: string } | undefined;
}

const CONTROLLERS = ['cpu', 'memory', 'pids'] as const;

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function readNumber(file: string): number | undefined {
  try {
    const n = Number(readFileSync(file, 'utf8').trim());
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

function v2Controllers(root: string): string[] {
  try {
    return readFileSync(join(root, 'cgroup.controllers'), 'utf8').trim().split(/\s+/);
  } catch {
    return [];
  }
}

/** Reads this machine's facts; the only part that touches the system. */
export function probeLocalBackend(options: Partial<LocalBackendOptions> = {}): LocalBackendFacts {
  const o = resolveOptions({ runnerId: 'check', ...options });
  const cgroupMode = detectCgroupMode(o.cgroupRoot);
  const offered = cgroupMode === 'v2' ? v2Controllers(o.cgroupRoot) : [];
  const facts: LocalBackendFacts = {
    platform: process.platform,
    uid: typeof process.getuid === 'function' ? process.getuid() : undefined,
    bwrapPath: o.bwrapPath,
    bwrapExecutable: executable(o.bwrapPath),
    pythonPath: o.pythonPath,
    pythonExecutable: executable(o.pythonPath),
    cgroupRoot: o.cgroupRoot,
    cgroupMode,
    missingV2Controllers:
      cgroupMode === 'v2' ? CONTROLLERS.filter((c) => !offered.includes(c)) : [],
    missingV1Controllers:
      cgroupMode === undefined
        ? V1_CONTROLLERS.filter((c) => !existsSync(join(o.cgroupRoot, c, 'cgroup.procs')))
        : [],
    maxUserNamespaces: readNumber('/proc/sys/user/max_user_namespaces'),
    unprivilegedUsernsClone: readNumber('/proc/sys/kernel/unprivileged_userns_clone'),
    apparmorRestrictsUserns: readNumber('/proc/sys/kernel/apparmor_restrict_unprivileged_userns'),
    sandboxUid: o.sandboxUid,
    sandboxProbe: undefined,
  };
  // The real test of user namespaces: only meaningful once everything it relies on is there.
  if (localBackendProblems(facts).length === 0) {
    const probe = spawnSync(
      o.bwrapPath,
      [
        '--unshare-all',
        '--unshare-user',
        '--ro-bind',
        '/',
        '/',
        '--proc',
        '/proc',
        '--dev',
        '/dev',
        'true',
      ],
      {
        timeout: 5000,
        // A PATH of its own: the caller's may hold directories the sandbox user cannot read.
        env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
        uid: o.sandboxUid,
        gid: o.sandboxGid,
      },
    );
    facts.sandboxProbe = {
      ok: probe.status === 0,
      detail: probe.stderr?.toString().trim() || `exit ${probe.status ?? probe.signal}`,
    };
  }
  return facts;
}

function cgroupProblem(f: LocalBackendFacts): LocalPrerequisiteProblem | undefined {
  if (f.cgroupMode === 'v2' && f.missingV2Controllers.length > 0) {
    const missing = f.missingV2Controllers.join(', ');
    return {
      prerequisite: 'cgroup controllers',
      problem: `cgroup v2 at ${f.cgroupRoot} does not offer ${missing} (sandboxes are capped with cpu, memory and pids)`,
      // The root of a cgroup namespace offers what its parent delegates: the fix is one level up.
      fix: `on the host: echo "${f.missingV2Controllers.map((c) => `+${c}`).join(' ')}" > /sys/fs/cgroup/cgroup.subtree_control, and run this container with --cgroupns=host`,
    };
  }
  if (f.cgroupMode !== undefined) return undefined;
  // Nothing mounted at all: a cgroup2 mount is the one-command fix; otherwise mount the v1 controllers missing.
  const allMissing = f.missingV1Controllers.length === V1_CONTROLLERS.length;
  return {
    prerequisite: 'cgroups',
    problem: `no usable cgroups under ${f.cgroupRoot}: need cgroup v2 (cgroup.controllers) or v1 with cpu, memory and pids mounted`,
    fix: allMissing
      ? `mount -t cgroup2 none ${f.cgroupRoot}`
      : f.missingV1Controllers
          .map(
            (c) =>
              `mkdir -p ${join(f.cgroupRoot, c)} && mount -t cgroup -o ${c} cgroup ${join(f.cgroupRoot, c)}`,
          )
          .join(' && '),
  };
}

function usernsFix(f: LocalBackendFacts): string {
  if (f.unprivilegedUsernsClone === 0) return 'sysctl -w kernel.unprivileged_userns_clone=1';
  if (f.apparmorRestrictsUserns === 1)
    {return 'sysctl -w kernel.apparmor_restrict_unprivileged_userns=0';}
  return 'sysctl -w user.max_user_namespaces=15000';
}

/** What is missing, from the facts alone (no I/O): each problem with the command that fixes it. */
export function localBackendProblems(f: LocalBackendFacts): LocalPrerequisiteProblem[] {
  const problems: LocalPrerequisiteProblem[] = [];
  if (f.platform !== 'linux') {
    problems.push({
      prerequisite: 'Linux',
      problem: `the local backend needs Linux (this is ${f.platform})`,
      fix: 'run Paddock in a Linux VM or a privileged Linux container',
    });
  }
  if (f.uid !== undefined && f.uid !== 0) {
    problems.push({
      prerequisite: 'root',
      problem:
        'the local backend must run as root (it creates cgroups and mounts each sandbox’s size-capped tmpfs)',
      fix: 'sudo -E pnpm start',
    });
  }
  if (!f.bwrapExecutable) {
    problems.push({
      prerequisite: 'bubblewrap',
      problem: `bubblewrap not found at ${f.bwrapPath}`,
      fix: 'apt-get install bubblewrap',
    });
  }
  if (!f.pythonExecutable) {
    problems.push({
      prerequisite: 'python3',
      problem: `python3 not found at ${f.pythonPath} (the per-sandbox supervisor is a Python 3 script)`,
      fix: 'apt-get install python3',
    });
  }
  const cgroups = cgroupProblem(f);
  if (cgroups) problems.push(cgroups);
  if (f.maxUserNamespaces === undefined) {
    problems.push({
      prerequisite: 'user namespaces',
      problem:
        'cannot read /proc/sys/user/max_user_namespaces: this kernel may lack user namespaces (CONFIG_USER_NS)',
      fix: 'use a kernel built with CONFIG_USER_NS=y (any current Debian or Ubuntu kernel)',
    });
  } else if (f.maxUserNamespaces === 0) {
    problems.push({
      prerequisite: 'user namespaces',
      problem: 'user namespaces are disabled (user.max_user_namespaces = 0)',
      fix: 'sysctl -w user.max_user_namespaces=15000',
    });
  }
  if (f.sandboxProbe && !f.sandboxProbe.ok) {
    problems.push({
      prerequisite: 'unprivileged user namespaces',
      problem: `bubblewrap cannot create an unprivileged sandbox as uid ${f.sandboxUid}: ${f.sandboxProbe.detail}`,
      fix: usernsFix(f),
    });
  }
  return problems;
}

/**
 * Checks what the local backend needs on this machine, so `pnpm start` can say clearly what is
 * missing instead of failing at the first launch.
 */
export function checkLocalBackendPrerequisites(options: Partial<LocalBackendOptions> = {}): {
  ok: boolean;
  problems: LocalPrerequisiteProblem[];
} {
  const problems = localBackendProblems(probeLocalBackend(options));
  return { ok: problems.length === 0, problems };
}

import { spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { detectCgroupMode } from './cgroups';
import { resolveOptions, type LocalBackendOptions } from './options';

/**
 * Checks what the local backend needs on this machine, so `pnpm start` can say clearly what is
 * missing instead of failing at the first launch.
 */
export function checkLocalBackendPrerequisites(options: Partial<LocalBackendOptions> = {}): { ok: boolean; problems: string[] } {
  const o = resolveOptions({ runnerId: 'check', ...options });
  const problems: string[] = [];
  if (process.platform !== 'linux') problems.push(`the local backend needs Linux (this is ${process.platform})`);
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    problems.push('the local backend must run as root (it creates cgroups and mounts each sandbox’s size-capped tmpfs)');
  }
  try {
    accessSync(o.bwrapPath, constants.X_OK);
  } catch {
    problems.push(`bubblewrap not found at ${o.bwrapPath} (install it: apt-get install bubblewrap)`);
  }
  try {
    accessSync(o.pythonPath, constants.X_OK);
  } catch {
    problems.push(`python3 not found at ${o.pythonPath} (the per-sandbox supervisor is a Python 3 script)`);
  }
  if (!detectCgroupMode(o.cgroupRoot)) {
    problems.push(`no usable cgroups under ${o.cgroupRoot}: need cgroup v2 (cgroup.controllers) or v1 with cpu, memory and pids mounted`);
  }
  try {
    const max = Number(readFileSync('/proc/sys/user/max_user_namespaces', 'utf8').trim());
    if (max === 0) problems.push('user namespaces are disabled (user.max_user_namespaces = 0)');
  } catch {
    problems.push('cannot read /proc/sys/user/max_user_namespaces: user namespaces may be unavailable');
  }
  if (problems.length === 0) {
    const probe = spawnSync(o.bwrapPath, ['--unshare-all', '--unshare-user', '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', 'true'], {
      timeout: 5000,
      uid: o.sandboxUid,
      gid: o.sandboxGid,
    });
    if (probe.status !== 0) {
      problems.push(`bubblewrap cannot create an unprivileged sandbox as uid ${o.sandboxUid}: ${probe.stderr?.toString().trim() || `exit ${probe.status}`}`);
    }
  }
  return { ok: problems.length === 0, problems };
}

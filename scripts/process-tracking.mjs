// Tracks every process a test run starts, however it detaches, so that the run can fail naming
// the ones that outlive it.
//
// Parent pids do not work for this: runners are started detached, supervisors are reparented to
// init, and sandboxes move themselves into cgroups of their own. A named cgroup-v1 hierarchy with
// no controller attached ("none,name=...") does: membership is inherited by every child, nothing
// in Paddock ever moves a process in that hierarchy, and its `cgroup.procs` lists what is still
// alive. It needs root (as the sandbox tests do); without it the check says why it is off.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const MOUNT = '/run/paddock-tracking';
const HIERARCHY = 'paddock-tracking';

function mounted() {
  try {
    return readFileSync('/proc/self/mounts', 'utf8')
      .split('\n')
      .some((l) => l.split(' ')[1] === MOUNT);
  } catch {
    return false;
  }
}

function groupPids(dir) {
  const pids = [];
  const walk = (d) => {
    try {
      for (const line of readFileSync(join(d, 'cgroup.procs'), 'utf8').split('\n')) if (line.trim()) pids.push(Number(line));
      for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(join(d, e.name));
    } catch {
      /* a group removed while walking */
    }
  };
  walk(dir);
  return pids;
}

function describe(pid) {
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    return `${pid} ${cmd.length > 200 ? `${cmd.slice(0, 200)}…` : cmd}`;
  } catch {
    return `${pid} (gone)`;
  }
}

/**
 * Moves this process into a fresh tracking group (its children inherit it). Returns
 * `{ leftovers(), kill(pids), close() }`, or `{ off: reason }` when tracking is impossible here.
 */
export function startTracking(label) {
  try {
    if (!mounted()) {
      mkdirSync(MOUNT, { recursive: true });
      execFileSync('mount', ['-t', 'cgroup', '-o', `none,name=${HIERARCHY}`, HIERARCHY, MOUNT], { stdio: 'pipe' });
    }
    const dir = join(MOUNT, `${label}-${process.pid}-${Date.now().toString(36)}`);
    mkdirSync(dir);
    writeFileSync(join(dir, 'cgroup.procs'), String(process.pid));
    return {
      /** Processes of the group still alive, this one excepted, as "pid command line". */
      leftovers() {
        return groupPids(dir)
          .filter((p) => p !== process.pid)
          .map(describe);
      },
      /** TERM, then KILL after `graceMs`, what is left; resolves once the group is empty or the time is up. */
      async killLeftovers(graceMs = 5_000) {
        for (const signal of ['SIGTERM', 'SIGKILL']) {
          for (const p of groupPids(dir)) if (p !== process.pid) try { process.kill(p, signal); } catch { /* gone */ }
          const deadline = Date.now() + graceMs;
          while (Date.now() < deadline && groupPids(dir).some((p) => p !== process.pid)) await new Promise((r) => setTimeout(r, 50));
        }
      },
      close() {
        // Back to the hierarchy's root, then remove the (now empty) group.
        try {
          writeFileSync(join(MOUNT, 'cgroup.procs'), String(process.pid));
          if (existsSync(dir)) rmdirSync(dir);
        } catch {
          /* a leftover we could not kill keeps it; the next run uses a new group */
        }
      },
    };
  } catch (e) {
    return { off: `process-leak check off: cannot create a tracking cgroup (${e instanceof Error ? e.message.split('\n')[0] : String(e)})` };
  }
}

import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function readProc(pid: string, file: 'cmdline' | 'environ'): string {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'latin1');
  } catch {
    return '';
  }
}

/**
 * Processes (other than this one) whose command line or environment names `dir`, as
 * "pid command line". Runners name their state directory only in their environment
 * (`PADDOCK_RUNNER_STATE_DIR`), supervisors and sandboxes in their command lines.
 */
export function processesUsing(dir: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    const cmdline = readProc(pid, 'cmdline');
    if (cmdline === '') continue; // kernel threads and processes already gone
    if (cmdline.includes(dir) || readProc(pid, 'environ').includes(dir)) found.push(`${pid} ${cmdline.split('\0').join(' ').trim()}`);
  }
  return found;
}

function signalAll(dir: string, signal: NodeJS.Signals): void {
  for (const p of processesUsing(dir)) {
    try {
      process.kill(Number(p.split(' ')[0]), signal);
    } catch {
      /* already gone */
    }
  }
}

/** Mount points at or under `dir`, deepest first (`/proc/self/mounts` escapes spaces as \040). */
function mountsUnder(dir: string): string[] {
  let table = '';
  try {
    table = readFileSync('/proc/self/mounts', 'utf8');
  } catch {
    return [];
  }
  return table
    .split('\n')
    .map((line) => (line.split(' ')[1] ?? '').replace(/\\040/g, ' '))
    .filter((m) => m === dir || m.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
}

/**
 * Removes a test's state directory that sandboxes may still be using. Sandboxes outlive the
 * runner by design, and a supervisor still tearing one down holds its tmpfs mounted under the
 * directory, so a plain recursive delete races it (EBUSY). This stops every process that names
 * the directory in its command line or environment (TERM, then KILL after `graceMs`), detaches
 * what is still mounted under it (a supervisor killed mid-teardown never unmounts), then deletes it.
 */
export async function removeStateDir(dir: string, graceMs = 5_000): Promise<void> {
  const using = (): boolean => processesUsing(dir).length > 0;
  if (using()) {
    signalAll(dir, 'SIGTERM');
    for (let waited = 0; waited < graceMs && using(); waited += 50) await sleep(50);
    if (using()) {
      signalAll(dir, 'SIGKILL');
      for (let waited = 0; waited < 2_000 && using(); waited += 50) await sleep(50);
    }
  }
  for (const mount of mountsUnder(dir)) spawnSync('umount', ['-l', mount]);
  rmSync(dir, { recursive: true, force: true });
}

/** Whether a process with this id exists (a zombie not yet reaped counts). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const anyProcessNames = (dir: string): boolean => spawnSync('pgrep', ['-f', dir]).status === 0;

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
 * directory, so a plain recursive delete races it (EBUSY). This stops every process whose
 * command line names the directory (TERM, then KILL after `graceMs`), detaches what is still
 * mounted under it (a supervisor killed mid-teardown never unmounts), then deletes it.
 */
export async function removeStateDir(dir: string, graceMs = 5_000): Promise<void> {
  if (anyProcessNames(dir)) {
    spawnSync('pkill', ['-TERM', '-f', dir]);
    for (let waited = 0; waited < graceMs && anyProcessNames(dir); waited += 50) await sleep(50);
    if (anyProcessNames(dir)) {
      spawnSync('pkill', ['-KILL', '-f', dir]);
      for (let waited = 0; waited < 2_000 && anyProcessNames(dir); waited += 50) await sleep(50);
    }
  }
  for (const mount of mountsUnder(dir)) spawnSync('umount', ['-l', mount]);
  rmSync(dir, { recursive: true, force: true });
}

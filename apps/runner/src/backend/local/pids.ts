import { readFileSync } from 'node:fs';

/** A pid written in a file by a supervisor (undefined when absent or not a pid). */
export function readPid(file: string): number | undefined {
  try {
    const n = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

export function pidAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // A zombie has exited; only its parent has not collected it yet.
    return !/^\d+ \(.*\) Z /.test(stat);
  } catch {
    return false;
  }
}

/** Alive and running the supervisor script (not a recycled pid). */
export function isOurSupervisor(pid: number, script: string): boolean {
  try {
    return pidAlive(pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(script);
  } catch {
    return false;
  }
}


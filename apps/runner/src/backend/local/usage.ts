import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CgroupUsage } from '../sandbox-backend';
import type { RunnerCgroups } from './cgroups';

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function statField(text: string | undefined, key: string): number | undefined {
  if (text === undefined) return undefined;
  for (const line of text.split('\n')) {
    const [k, v] = line.split(' ');
    if (k === key && v !== undefined) return Number(v);
  }
  return undefined;
}

/**
 * A sandbox's cumulative CPU time and current memory from its cgroups. Memory leaves out the
 * inactive file cache, which the kernel reclaims first (what `docker stats` and the kubelet show
 * as the working set). Undefined when the cgroups are gone or the host does not account CPU.
 */
export function readCgroupUsage(cg: RunnerCgroups, sandboxId: string): CgroupUsage | undefined {
  const dirs = cg.boxDirs(sandboxId);
  if (cg.mode === 'v2') {
    const [dir] = dirs as [string];
    const usec = statField(read(join(dir, 'cpu.stat')), 'usage_usec');
    const current = Number(read(join(dir, 'memory.current')) ?? NaN);
    if (usec === undefined || !Number.isFinite(current)) return undefined;
    const inactive = statField(read(join(dir, 'memory.stat')), 'inactive_file') ?? 0;
    return { cpuNanos: usec * 1000, memoryBytes: Math.max(0, current - inactive) };
  }
  const memDir = dirs[1] as string;
  // cpuacct as its own hierarchy, else co-mounted with cpu.
  const cpuFile = [...dirs.filter((d) => d.includes('/cpuacct/')), dirs[2] as string].map((d) => join(d, 'cpuacct.usage'));
  const nanos = cpuFile.map((f) => Number(read(f) ?? NaN)).find((n) => Number.isFinite(n));
  const usage = Number(read(join(memDir, 'memory.usage_in_bytes')) ?? NaN);
  if (nanos === undefined || !Number.isFinite(usage)) return undefined;
  const inactive = statField(read(join(memDir, 'memory.stat')), 'total_inactive_file') ?? 0;
  return { cpuNanos: nanos, memoryBytes: Math.max(0, usage - inactive) };
}

import type { ResourceUsage, SandboxUsageMap } from '@paddock/contracts';
import type { CgroupUsage } from '../backend/sandbox-backend';

const MIB = 1024 * 1024;

/**
 * Turns cumulative cgroup counters into `status.resourceUsage`: CPU as the average rate between
 * two samples (millicores), memory as the last reading. A sandbox's first sample only sets the
 * baseline, so its usage appears from the second one on.
 */
export class UsageSampler {
  private readonly prev = new Map<string, { cpuNanos: number; atMs: number }>();
  private readonly latest = new Map<string, ResourceUsage>();

  /** Samples every sandbox in `ids` (forgetting any other) and returns the current map. */
  sample(ids: Iterable<string>, read: (sandboxId: string) => CgroupUsage | undefined, now: Date): SandboxUsageMap {
    const live = new Set(ids);
    for (const id of [...this.prev.keys()]) {
      if (!live.has(id)) {
        this.prev.delete(id);
        this.latest.delete(id);
      }
    }
    const atMs = now.getTime();
    for (const id of live) {
      const u = read(id);
      if (!u) continue;
      const p = this.prev.get(id);
      this.prev.set(id, { cpuNanos: u.cpuNanos, atMs });
      if (!p || atMs <= p.atMs) continue;
      // ns of CPU per ms of wall time, ×1000/1e6: millicores.
      const cpuMillicores = Math.max(0, Math.round((u.cpuNanos - p.cpuNanos) / ((atMs - p.atMs) * 1000)));
      this.latest.set(id, { cpuMillicores, memoryMb: Math.round(u.memoryBytes / MIB), gpuCount: 0, sampledAt: now.toISOString() });
    }
    return Object.fromEntries(this.latest);
  }

  get(sandboxId: string): ResourceUsage | undefined {
    return this.latest.get(sandboxId);
  }
}

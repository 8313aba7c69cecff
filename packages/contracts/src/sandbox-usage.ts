import { z } from 'zod';

/**
 * What a sandbox is using right now, summed across its containers: CPU as the average rate over
 * the runner's last sampling period, memory as the current resident use (page cache included, as
 * the cgroup counts it). Refreshed while the sandbox runs; a paused sandbox reports zero CPU.
 */
export const ResourceUsageSchema = z.object({
  cpuMillicores: z.number().int().nonnegative(),
  memoryMb: z.number().int().nonnegative(),
  gpuCount: z.number().int().nonnegative().default(0),
  /** RFC 3339: when the runner took the sample. */
  sampledAt: z.string(),
});
export type ResourceUsage = z.infer<typeof ResourceUsageSchema>;
export type ResourceUsageInput = z.input<typeof ResourceUsageSchema>;

/** Per-sandbox usage a runner carries in its heartbeat (sandbox id → usage), for live sandboxes only. */
export const SandboxUsageMapSchema = z.record(z.string(), ResourceUsageSchema);
export type SandboxUsageMap = z.infer<typeof SandboxUsageMapSchema>;

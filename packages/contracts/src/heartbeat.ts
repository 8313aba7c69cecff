import { z } from 'zod';
import { RunnerCapabilitiesSchema } from './capabilities';
import { WarmPoolStatusSchema } from './warm-pools';
import { SandboxUsageMapSchema } from './sandbox-usage';

export const RUNNER_HEALTHS = ['HEALTHY', 'DEGRADED', 'UNHEALTHY'] as const;

/** Free capacity reported by a runner; quantities in base units so the gateway can compare. */
export const RunnerCapacitySchema = z.object({
  cpuMillisFree: z.number().int().nonnegative(),
  memoryBytesFree: z.number().int().nonnegative(),
  sandboxesRunning: z.number().int().nonnegative(),
  sandboxesMax: z.number().int().nonnegative(),
  /**
   * Warm sandboxes held idle for the runner's pools. Their requests are already taken out of the
   * free CPU and memory above and they count towards `sandboxesMax`: warm capacity is capacity used.
   */
  sandboxesWarm: z.number().int().nonnegative().optional(),
});
export type RunnerCapacity = z.infer<typeof RunnerCapacitySchema>;

/**
 * Published by every runner on `subjects.runnerHeartbeat(runnerId)` every few seconds
 * (default 5 s). The control plane derives `connectionStatus` from it; the gateway learns the
 * candidate runners, their policies' etags and their free capacity from it.
 */
export const RunnerHeartbeatSchema = z.object({
  runnerId: z.string().min(1),
  organizationId: z.string().min(1),
  clusterId: z.string().min(1),
  zone: z.string().min(1),
  runnerGroupId: z.string().default('default'),
  /** Runner release revision it runs (the controller rolls revisions out). */
  revision: z.number().int().nonnegative(),
  /** Etag of the policy the runner currently applies; null when it applies the platform default. */
  policyEtag: z.string().nullable(),
  usingDefaultPolicy: z.boolean(),
  backend: z.enum(['local', 'kubernetes']),
  health: z.enum(RUNNER_HEALTHS),
  healthDetail: z.string().optional(),
  capabilities: RunnerCapabilitiesSchema,
  capacity: RunnerCapacitySchema,
  /** Each warm pool's size and how many are ready now (absent: the runner has no pools). */
  warmPoolStatus: z.array(WarmPoolStatusSchema).optional(),
  /** Unique per runner process: a change tells observers the runner restarted. */
  instanceId: z.string().min(1),
  /** Monotonic per instance. */
  sequence: z.number().int().nonnegative(),
  startedAt: z.string(),
  sentAt: z.string(),
  /** Heartbeat period the runner promises, so observers can derive staleness. */
  intervalMs: z.number().int().positive(),
  /** Live sandboxes' last usage samples (the gateway shows them as `status.resourceUsage`). */
  sandboxUsage: SandboxUsageMapSchema.optional(),
});
export type RunnerHeartbeat = z.infer<typeof RunnerHeartbeatSchema>;

import { z } from 'zod';
import { SandboxStateReasonSchema, SandboxStateSchema } from './enums';
import { EffectiveResourcesSchema, ResolvedEgressSchema, ResolvedIngressSchema, SandboxSpecSchema } from './sandbox-spec';
import { ResourceUsageSchema } from './sandbox-usage';

/**
 * The `Sandbox` resource as the gateway and the SDK show it, and the state event
 * a runner publishes for every lifecycle change of a sandbox it owns.
 *
 * Invariants:
 * - `spec` is the request as accepted (immutable afterwards); the `status.effective*` fields echo
 *   what the policy resolved at launch. A later policy change never rewrites them.
 * - every terminal state (`STATE_COMPLETED`, `STATE_FAILED`) carries a `stateReason`.
 * - `exitCode` is present only when it was observed (0 is a valid exit code).
 */

/** One container of a sandbox: `waiting` (not started yet), `running` or `terminated` (with its exit code when observed). */
export const ContainerStatusSchema = z.object({
  name: z.string(),
  state: z.enum(['waiting', 'running', 'terminated']),
  exitCode: z.number().int().optional(),
  restartCount: z.number().int(),
});
export type ContainerStatusView = z.infer<typeof ContainerStatusSchema>;

/** Status echoes of the resolved spec; absent until the runner resolved the spec. */
export const SandboxEffectiveFieldsSchema = z.object({
  effectiveResources: EffectiveResourcesSchema.optional(),
  effectiveResourceRequirements: z
    .array(
      z.object({
        container: z.string(),
        requests: z.object({ cpu: z.string(), memory: z.string(), gpuCount: z.number().int() }),
        limits: z.object({ cpu: z.string(), memory: z.string(), gpuCount: z.number().int() }),
      }),
    )
    .optional(),
  effectiveMaxLifetimeSeconds: z.number().int().optional(),
  effectiveEgress: ResolvedEgressSchema.optional(),
  effectiveIngress: ResolvedIngressSchema.optional(),
  /** `<node-default>` = none assigned; `""` = unknown. */
  effectiveRuntimeClass: z.string().optional(),
});
export type SandboxEffectiveFields = z.infer<typeof SandboxEffectiveFieldsSchema>;

export const SandboxStatusSchema = SandboxEffectiveFieldsSchema.extend({
  state: SandboxStateSchema,
  /** Why the sandbox is in this state; always set on a terminal state (e.g. `EXITED`, `LIFETIME_EXPIRED`). */
  stateReason: SandboxStateReasonSchema.optional(),
  /** Human-readable detail (e.g. the start failure's error text). */
  message: z.string().optional(),
  /** Exit code of the primary process, present only when observed. */
  exitCode: z.number().int().optional(),
  /** Each container's state, init containers first; present for a sandbox with more than one container. */
  containerStatuses: z.array(ContainerStatusSchema).optional(),
  runnerId: z.string(),
  runnerGroupId: z.string(),
  /** RFC 3339 timestamps. */
  createTime: z.string(),
  startTime: z.string().optional(),
  endTime: z.string().optional(),
  /** Live usage from the runner's last sample; absent before the first one and once ended. */
  resourceUsage: ResourceUsageSchema.optional(),
});
export type SandboxStatus = z.infer<typeof SandboxStatusSchema>;

/**
 * One sandbox. `sandboxId` is chosen by the caller of the runner's `create` (the gateway), which
 * makes it the idempotency key of the create.
 *
 * @example
 * const sb = SandboxSchema.parse(reply.sandbox);
 * if (sb.status.state === 'STATE_RUNNING') { ... }
 */
export const SandboxSchema = z.object({
  sandboxId: z.string().min(1),
  organizationId: z.string().min(1),
  spec: SandboxSpecSchema,
  status: SandboxStatusSchema,
  /** Free-form labels the caller attached at create (e.g. the gateway's request id). */
  labels: z.record(z.string(), z.string()).default({}),
});
export type Sandbox = z.infer<typeof SandboxSchema>;

/**
 * Published by the owning runner on `subjects.sandboxState(runnerId)` for every state change.
 * `sequence` is monotonic per sandbox, across runner restarts too (the runner derives it from
 * its clock in microseconds, bumped past the previous value), so a consumer keeps the highest it
 * has seen and drops anything older or equal.
 *
 * @example
 * if (evt.sequence <= lastSeen.get(evt.sandboxId) ?? 0) return; // stale or duplicate
 */
export const SandboxStateEventSchema = z.object({
  sandboxId: z.string().min(1),
  organizationId: z.string().min(1),
  runnerId: z.string().min(1),
  state: SandboxStateSchema,
  reason: SandboxStateReasonSchema.optional(),
  message: z.string().optional(),
  exitCode: z.number().int().optional(),
  /** The sandbox's containers as of this state change (a sandbox with more than one). */
  containerStatuses: z.array(ContainerStatusSchema).optional(),
  /** RFC 3339 time the state was observed. */
  at: z.string(),
  sequence: z.number().int().nonnegative(),
});
export type SandboxStateEvent = z.infer<typeof SandboxStateEventSchema>;

import { z } from 'zod';
import { RunnerConnectionStatusSchema, RunnerInstallStatusSchema } from './enums';
import { InstallErrorSchema } from './install-report';
import {
  MaintenancePolicySchema,
  ProfileBindingSchema,
  ProfileTemplateInputSchema,
  RunnerOverridesSchema,
} from './managed-runner';
import { WarmPoolSchema } from './warm-pools';

/**
 * Events of the managed-runner streams, as stored in the control plane's Postgres event log
 * (`es_messages`, see `@paddock/event-store`).
 *
 * - One stream per runner: `stream_id = managed_runner-<uid>` (`runnerStreamId`), `stream_type =
 *   'managed_runner'` (`RUNNER_STREAM_TYPE`). The uid is the server-assigned UUID; a runner id that
 *   is deleted and re-created gets a new uid and a new stream.
 * - `message_type` is the event name below, `message_data` its payload, `message_metadata` carries
 *   `actor` (token id, `controller:<id>` or `system:...`), `organizationId` and `requestId`.
 * - The control plane is the only writer. Every append updates the read model `cp_runners`
 *   (`RUNNERS_PROJECTION_TABLE`) in the same transaction, so the table is always exactly the fold of
 *   the streams (plus heartbeat columns, which are not events).
 *
 * The in-cluster controller treats the published view `cp_runners_v1` as the desired state
 * (level-based) and the log only as a wake-up signal, through the view `cp_runner_log_v1`
 * (positions and runner uids of its own cluster, no payloads; see `published-views.ts`). Changes
 * are additive only (new optional fields); a breaking change gets a new event type name.
 */
export const RUNNER_STREAM_TYPE = 'managed_runner';
export const PROFILE_TEMPLATE_STREAM_TYPE = 'profile_template';
/** Read model of the runners, updated inline with every append. */
export const RUNNERS_PROJECTION_TABLE = 'cp_runners';
export const PROFILE_TEMPLATES_PROJECTION_TABLE = 'cp_profile_templates';

/** `managed_runner-<uid>`: the one place a runner stream id is built. */
export function runnerStreamId(uid: string): string {
  return `${RUNNER_STREAM_TYPE}-${uid}`;
}
/** `profile_template-<uuid>`. */
export function profileTemplateStreamId(id: string): string {
  return `${PROFILE_TEMPLATE_STREAM_TYPE}-${id}`;
}

/** A runner spec with every server default applied (what streams and the read model hold). */
export const StoredRunnerSpecSchema = z.object({
  releaseChannel: z.enum(['RELEASE_CHANNEL_STABLE', 'RELEASE_CHANNEL_RAPID']),
  maintenancePolicy: MaintenancePolicySchema,
  overrides: RunnerOverridesSchema,
  enforceResourceLimits: z.boolean(),
  /** Absent in events written before warm pools existed: none. */
  warmPools: z.array(WarmPoolSchema).optional(),
});
export type StoredRunnerSpec = z.infer<typeof StoredRunnerSpecSchema>;

/** A runner release as resolved from the release catalogue when the event was decided. */
export const RunnerReleaseRefSchema = z.object({
  revision: z.number().int().nonnegative(),
  version: z.string(),
  image: z.string(),
});
export type RunnerReleaseRef = z.infer<typeof RunnerReleaseRefSchema>;

/** The validated policy document (normalized by `validatePolicy`); null = platform default. */
const StoredPolicySchema = z.record(z.string(), z.unknown()).nullable();

export const RunnerCreatedSchema = z.object({
  uid: z.string(),
  organizationId: z.string(),
  runnerId: z.string(),
  zone: z.string(),
  clusterId: z.string(),
  clusterName: z.string(),
  runnerGroupId: z.string(),
  displayName: z.string(),
  spec: StoredRunnerSpecSchema,
  policy: StoredPolicySchema,
  /** Starts at 1; the etag is derived from it. */
  policyRevision: z.number().int().positive(),
  /** Release the first install rolls out: `targetRevision`. */
  release: RunnerReleaseRefSchema,
  createdAt: z.string(),
});

/** Settings other than the policy changed; each present key is the new whole value. */
export const RunnerSettingsUpdatedSchema = z.object({
  displayName: z.string().optional(),
  zone: z.string().optional(),
  runnerGroupId: z.string().optional(),
  spec: StoredRunnerSpecSchema.optional(),
  /** Update-mask paths (snake_case) that produced the change. */
  paths: z.array(z.string()),
  updatedAt: z.string(),
});

/** The whole policy document was replaced; `policyRevision` is the new revision (etag source). */
export const RunnerPolicyReplacedSchema = z.object({
  policy: z.record(z.string(), z.unknown()),
  policyRevision: z.number().int().positive(),
  updatedAt: z.string(),
});

/** `targetRevision` raised: the controller should roll `release` out. */
export const RunnerUpdateRequestedSchema = z.object({
  release: RunnerReleaseRefSchema,
  previousTargetRevision: z.number().int().nonnegative(),
  trigger: z.enum(['user', 'maintenance']),
  requestedAt: z.string(),
});

/** Controller-observed install status (from an install report with a current fencing token). */
export const RunnerInstallStatusChangedSchema = z.object({
  installStatus: RunnerInstallStatusSchema,
  installError: InstallErrorSchema.nullable(),
  controllerId: z.string(),
  fencingToken: z.number().int().nonnegative(),
  reportedAt: z.string(),
});

/** The controller reports that `activeRevision` now runs. */
export const RunnerRevisionActivatedSchema = z.object({
  activeRevision: z.number().int().nonnegative(),
  controllerId: z.string(),
  fencingToken: z.number().int().nonnegative(),
  reportedAt: z.string(),
});

/** Derived from heartbeats: recorded on transitions only. */
export const RunnerConnectionChangedSchema = z.object({
  connectionStatus: RunnerConnectionStatusSchema,
  at: z.string(),
});

/** `DELETE` accepted: install status becomes DELETING; the controller tears the runner down. */
export const RunnerDeletionRequestedSchema = z.object({ requestedAt: z.string() });

/** The controller reported `gone`: the runner leaves every read and frees its id and cluster. */
export const RunnerRemovedSchema = z.object({
  controllerId: z.string(),
  fencingToken: z.number().int().nonnegative(),
  removedAt: z.string(),
});

/** Legacy v1beta2: `managed_spec.allow_privileged_profile_annotations` set or cleared. */
export const RunnerPrivilegedProfilePostureChangedSchema = z.object({
  allowPrivilegedProfileAnnotations: z.boolean(),
  updatedAt: z.string(),
});

/** Legacy v1beta2: the runner's profile bindings replaced as a whole. */
export const RunnerProfileBindingsReplacedSchema = z.object({
  profileBindings: z.array(ProfileBindingSchema),
  updatedAt: z.string(),
});

/** Legacy v1beta2 profile template created (stream `profile_template-<id>`). */
export const ProfileTemplateCreatedSchema = z.object({
  profileTemplateId: z.string(),
  organizationId: z.string(),
  template: ProfileTemplateInputSchema,
  createdAt: z.string(),
});

/** Every runner event, discriminated by `type` (= the stored `message_type`). */
export const RunnerEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('RunnerCreated'), data: RunnerCreatedSchema }),
  z.object({ type: z.literal('RunnerSettingsUpdated'), data: RunnerSettingsUpdatedSchema }),
  z.object({ type: z.literal('RunnerPolicyReplaced'), data: RunnerPolicyReplacedSchema }),
  z.object({ type: z.literal('RunnerUpdateRequested'), data: RunnerUpdateRequestedSchema }),
  z.object({ type: z.literal('RunnerInstallStatusChanged'), data: RunnerInstallStatusChangedSchema }),
  z.object({ type: z.literal('RunnerRevisionActivated'), data: RunnerRevisionActivatedSchema }),
  z.object({ type: z.literal('RunnerConnectionChanged'), data: RunnerConnectionChangedSchema }),
  z.object({ type: z.literal('RunnerDeletionRequested'), data: RunnerDeletionRequestedSchema }),
  z.object({ type: z.literal('RunnerRemoved'), data: RunnerRemovedSchema }),
  z.object({ type: z.literal('RunnerPrivilegedProfilePostureChanged'), data: RunnerPrivilegedProfilePostureChangedSchema }),
  z.object({ type: z.literal('RunnerProfileBindingsReplaced'), data: RunnerProfileBindingsReplacedSchema }),
]);
export type RunnerEvent = z.infer<typeof RunnerEventSchema>;
export type RunnerEventType = RunnerEvent['type'];
export const RUNNER_EVENT_TYPES: readonly RunnerEventType[] = RunnerEventSchema.options.map((o) => o.shape.type.value);

export type ProfileTemplateCreated = { type: 'ProfileTemplateCreated'; data: z.infer<typeof ProfileTemplateCreatedSchema> };

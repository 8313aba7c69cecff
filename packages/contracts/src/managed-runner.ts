import { z } from 'zod';
import {
  ManagementModeSchema,
  ReleaseChannelSchema,
  RunnerConnectionStatusSchema,
  RunnerInstallStatusSchema,
} from './enums';
import { InstallErrorSchema } from './install-report';
import { PolicySchema } from './policy';
import { WarmPoolSchema, WarmPoolsSchema, WarmPoolStatusSchema, type WarmPool } from './warm-pools';

/**
 * The v1 `ManagedRunner` resource of `/v1/sandbox/managedRunners`, in the
 * camelCase JSON the API speaks. Request bodies may also arrive in the snake_case spelling of the
 * CLI's YAML; the control plane converts them with `snakeToCamelDeep` before these schemas run.
 *
 * Settings objects are strict so a typo (`releaseChanel`) is refused instead of silently ignored.
 * 64-bit integers (`activeRevision`, `targetRevision`) are serialized as decimal strings, as proto3
 * JSON does.
 *
 * Error decisions where the seeds leave the code open:
 * - a second runner on a cluster: `already_exists`, message `a managed runner already exists for this
 *   cluster`, reason PADDOCK_RUNNER_EXISTS_FOR_CLUSTER (the cluster slot is taken, like an id);
 * - a taken runner id, or a `requestId` reused with another body: `already_exists`;
 * - stale policy etag: `failed_precondition`, `managed_runner.etag is stale; reload the runner and
 *   retry`; missing etag on a policy write: `invalid_argument` (reason PADDOCK_ETAG_REQUIRED);
 * - `applyAvailableUpdate` with nothing newer on the channel: `failed_precondition`;
 * - another organization's runner: `not_found`, byte-identical to a missing one.
 */

/** A runner id: human-readable, operator-assigned, unique in its organization; a DNS label. */
export const RUNNER_ID_PATTERN = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
export const DEFAULT_RUNNER_GROUP_ID = 'default';
/** `requestId` idempotency tokens are at most 128 UTF-8 bytes. */
export const REQUEST_ID_MAX_BYTES = 128;

export const MaintenanceWindowSchema = z.strictObject({
  /** Five-field cron in UTC, e.g. `0 9 * * SAT`: when a window starts. */
  cron: z.string().min(1),
  /** How long the window stays open, 60..604800 seconds. */
  durationSeconds: z.number().int().min(60).max(604_800),
});
export type MaintenanceWindow = z.infer<typeof MaintenanceWindowSchema>;

export const MaintenanceExclusionSchema = z.strictObject({
  /** RFC 3339, inclusive. */
  startTime: z.iso.datetime({ offset: true }),
  /** RFC 3339, exclusive; must be after `startTime`. */
  endTime: z.iso.datetime({ offset: true }),
  reason: z.string().optional(),
});
export type MaintenanceExclusion = z.infer<typeof MaintenanceExclusionSchema>;

export const MaintenancePolicySchema = z.strictObject({
  /** Empty = updates may start at any time outside the exclusions. */
  windows: z.array(MaintenanceWindowSchema).default([]),
  /** One-time periods in which an update may not start; they win over windows. */
  exclusions: z.array(MaintenanceExclusionSchema).default([]),
});
export type MaintenancePolicy = z.infer<typeof MaintenancePolicySchema>;

export const TolerationSchema = z.strictObject({
  key: z.string().optional(),
  operator: z.enum(['Equal', 'Exists']).optional(),
  value: z.string().optional(),
  /** `""` means every effect. */
  effect: z.enum(['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
});
export type Toleration = z.infer<typeof TolerationSchema>;

/** Kubernetes quantity, e.g. `500m`, `2Gi`. */
const QuantityString = z.string().regex(/^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/, 'must be a Kubernetes quantity');

export const RunnerResourcesSchema = z.strictObject({
  cpuRequest: QuantityString.optional(),
  memoryRequest: QuantityString.optional(),
  cpuLimit: QuantityString.optional(),
  memoryLimit: QuantityString.optional(),
});
export type RunnerResources = z.infer<typeof RunnerResourcesSchema>;

export const RunnerScalingSchema = z.strictObject({
  replicas: z.number().int().min(0).optional(),
  autoscalingEnabled: z.boolean().optional(),
  minReplicas: z.number().int().min(0).optional(),
  maxReplicas: z.number().int().min(0).optional(),
});
export type RunnerScaling = z.infer<typeof RunnerScalingSchema>;

const StringMap = z.record(z.string(), z.string());

/** Overrides of the runner's own Deployment (not of sandbox pods). */
export const RunnerOverridesSchema = z.strictObject({
  nodeSelector: StringMap.optional(),
  tolerations: z.array(TolerationSchema).optional(),
  /** Kubernetes `affinity` object, JSON-encoded. */
  affinity: z.string().optional(),
  resources: RunnerResourcesSchema.optional(),
  annotations: StringMap.optional(),
  labels: StringMap.optional(),
  /** Runner environment; sensitive. */
  env: StringMap.optional(),
  args: z.array(z.string()).optional(),
  scaling: RunnerScalingSchema.optional(),
  cpuRuntimeClass: z.string().optional(),
  gpuRuntimeClass: z.string().optional(),
});
export type RunnerOverrides = z.infer<typeof RunnerOverridesSchema>;

export const RunnerSpecSchema = z.strictObject({
  /** Defaults to RELEASE_CHANNEL_STABLE; can be switched, not removed. */
  releaseChannel: ReleaseChannelSchema.optional(),
  maintenancePolicy: MaintenancePolicySchema.optional(),
  overrides: RunnerOverridesSchema.optional(),
  /** Require sandboxes to declare both cpu and memory limits. */
  enforceResourceLimits: z.boolean().optional(),
  /**
   * Sandboxes the runner keeps started and idle, per template, for creates that match one. Each
   * template is checked against the runner's policy (a template it would refuse is refused).
   */
  warmPools: WarmPoolsSchema.optional(),
});
export type RunnerSpecInput = z.input<typeof RunnerSpecSchema>;

/** A spec after server defaults: what the runner stream and the read model hold. */
export interface RunnerSpec {
  releaseChannel: 'RELEASE_CHANNEL_STABLE' | 'RELEASE_CHANNEL_RAPID';
  maintenancePolicy: MaintenancePolicy;
  overrides: RunnerOverrides;
  enforceResourceLimits: boolean;
  warmPools?: WarmPool[];
}

export const RunnerIdentitySchema = z.strictObject({
  runnerId: z.string().optional(),
  zone: z.string().optional(),
  clusterId: z.string().optional(),
  /** Output only on reads; accepted on create as an alternative to `clusterId`. */
  clusterName: z.string().optional(),
  runnerGroupId: z.string().optional(),
});

/**
 * Output-only fields a client may echo back from a read. Create and PATCH bodies ignore them (a
 * mask naming one is refused); any other unknown key is an error.
 */
export const MANAGED_RUNNER_OUTPUT_ONLY_FIELDS = [
  'uid',
  'etag',
  'installStatus',
  'connectionStatus',
  'lastHeartbeatTime',
  'activeRevision',
  'targetRevision',
  'updateAvailable',
  'rolloutInProgress',
  'installError',
  'usingDefaultPolicy',
  'createTime',
  'updateTime',
  'deploymentSpec',
  'managementMode',
  'activeConfigVersion',
  'dataPlaneStatus',
  'warmPoolStatus',
] as const;

/**
 * `POST /v1/sandbox/managedRunners` body. `policy` omitted (or null) = the runner receives the
 * platform default when it connects; `{}` = the explicit empty, fully permissive posture.
 * `requestId` (≤128 bytes) makes the create idempotent; it may also be a query parameter.
 */
export const CreateManagedRunnerBodySchema = z.strictObject({
  identity: RunnerIdentitySchema.optional(),
  displayName: z.string().max(256).optional(),
  spec: RunnerSpecSchema.optional(),
  policy: z.record(z.string(), z.unknown()).nullable().optional(),
  requestId: z.string().optional(),
});
export type CreateManagedRunnerBody = z.infer<typeof CreateManagedRunnerBodySchema>;

/**
 * `PATCH /v1/sandbox/managedRunners/{id}?updateMask=...` body: the runner itself (no wrapper).
 * Only the paths named by the mask are read. A policy replacement carries the `etag` of the read it
 * is based on.
 */
export const UpdateManagedRunnerBodySchema = z.strictObject({
  identity: RunnerIdentitySchema.optional(),
  displayName: z.string().max(256).nullable().optional(),
  spec: RunnerSpecSchema.nullable().optional(),
  policy: z.record(z.string(), z.unknown()).nullable().optional(),
  etag: z.string().optional(),
});
export type UpdateManagedRunnerBody = z.infer<typeof UpdateManagedRunnerBodySchema>;

/** Update mask paths that v1 accepts (snake_case; camelCase spellings are accepted too). */
export const MANAGED_RUNNER_MUTABLE_PATHS = [
  'display_name',
  'identity.zone',
  'identity.runner_group_id',
  'spec',
  'spec.release_channel',
  'spec.maintenance_policy',
  'spec.overrides',
  'spec.enforce_resource_limits',
  'spec.warm_pools',
  'policy',
] as const;
export type ManagedRunnerMutablePath = (typeof MANAGED_RUNNER_MUTABLE_PATHS)[number];

/** Read-only Deployment the control plane renders for the runner (what the controller applies). */
export const DeploymentSpecSchema = z.object({
  image: z.string(),
  imagePullPolicy: z.string(),
  gatewayServer: z.string(),
  serviceAccount: z.string(),
  resources: RunnerResourcesSchema,
  initResources: RunnerResourcesSchema,
  scaling: RunnerScalingSchema,
  tolerations: z.array(TolerationSchema),
  nodeSelector: StringMap,
  affinity: z.string().optional(),
  labels: StringMap,
  annotations: StringMap,
  env: StringMap,
  args: z.array(z.string()),
  cpuRuntimeClass: z.string(),
  gpuRuntimeClass: z.string(),
});
export type DeploymentSpec = z.infer<typeof DeploymentSpecSchema>;

/** Decimal string of an int64 (proto3 JSON). */
const Int64String = z.string().regex(/^\d+$/);

/** The resource as every v1 read returns it. */
export const ManagedRunnerSchema = z.object({
  uid: z.string(),
  identity: z.object({
    runnerId: z.string(),
    zone: z.string(),
    clusterId: z.string(),
    clusterName: z.string(),
    runnerGroupId: z.string(),
  }),
  displayName: z.string(),
  spec: z.object({
    releaseChannel: ReleaseChannelSchema,
    maintenancePolicy: MaintenancePolicySchema,
    overrides: RunnerOverridesSchema,
    enforceResourceLimits: z.boolean(),
    /** Defaults to none when read from a control plane that predates warm pools. */
    warmPools: z.array(WarmPoolSchema).default([]),
  }),
  /** What the runner last reported of each warm pool (empty before its first such heartbeat). */
  warmPoolStatus: z.array(WarmPoolStatusSchema).default([]),
  /** null = no policy set; the runner applies the platform default (`usingDefaultPolicy`). */
  policy: PolicySchema.nullable(),
  /** Opaque policy revision token; changes only when the policy changes. */
  etag: z.string(),
  installStatus: RunnerInstallStatusSchema,
  connectionStatus: RunnerConnectionStatusSchema,
  lastHeartbeatTime: z.string().nullable(),
  activeRevision: Int64String,
  targetRevision: Int64String,
  updateAvailable: z.boolean(),
  rolloutInProgress: z.boolean(),
  installError: InstallErrorSchema.nullable(),
  usingDefaultPolicy: z.boolean(),
  managementMode: ManagementModeSchema,
  createTime: z.string(),
  updateTime: z.string(),
  deploymentSpec: DeploymentSpecSchema,
});
export type ManagedRunner = z.infer<typeof ManagedRunnerSchema>;

/** `GET /v1/sandbox/managedRunners` response. `nextPageToken` is `""` on the last page. */
export const ListManagedRunnersResponseSchema = z.object({
  managedRunners: z.array(ManagedRunnerSchema),
  nextPageToken: z.string(),
});
export type ListManagedRunnersResponse = z.infer<typeof ListManagedRunnersResponseSchema>;

export const MANAGED_RUNNERS_DEFAULT_PAGE_SIZE = 50;
export const MANAGED_RUNNERS_MAX_PAGE_SIZE = 100;

/** One field that changed in a revision: dotted camelCase path, value before and after. */
export const RunnerFieldChangeSchema = z.object({
  field: z.string(),
  before: z.unknown().optional(),
  after: z.unknown().optional(),
});
export type RunnerFieldChange = z.infer<typeof RunnerFieldChangeSchema>;

/**
 * One entry of `GET /v1/sandbox/managedRunners/{id}/revisions`: one event of the runner's stream,
 * what it changed, who (the token's actor) and when, and the policy etag in force after it.
 */
export const RunnerRevisionSchema = z.object({
  revision: z.number().int().positive(),
  eventType: z.string(),
  changes: z.array(RunnerFieldChangeSchema),
  actor: z.string().nullable(),
  time: z.string(),
  policyEtag: z.string(),
});
export type RunnerRevision = z.infer<typeof RunnerRevisionSchema>;

export const ListRunnerRevisionsResponseSchema = z.object({ revisions: z.array(RunnerRevisionSchema) });
export type ListRunnerRevisionsResponse = z.infer<typeof ListRunnerRevisionsResponseSchema>;

/** Legacy v1beta2: a profile template bound to a runner. */
export const ProfileBindingSchema = z.strictObject({
  profileTemplateId: z.string().min(1),
  profileName: z.string().optional(),
  isDefault: z.boolean().optional(),
  overridesJson: z.string().optional(),
});
export type ProfileBinding = z.infer<typeof ProfileBindingSchema>;

/** Legacy v1beta2 profile template; `spec.podTemplateJson` carries the pod-spec fragment. */
export const ProfileTemplateInputSchema = z.strictObject({
  displayName: z.string().optional(),
  description: z.string().optional(),
  labels: StringMap.optional(),
  spec: z.record(z.string(), z.unknown()).optional(),
});
export type ProfileTemplateInput = z.infer<typeof ProfileTemplateInputSchema>;

export const ProfileTemplateSchema = ProfileTemplateInputSchema.extend({
  profileTemplateId: z.string(),
  createTime: z.string(),
});
export type ProfileTemplate = z.infer<typeof ProfileTemplateSchema>;

import { z } from 'zod';
import {
  EgressRuleSchema,
  IngressRuleSchema,
  Int64Schema,
  QuantitySchema,
  StorageMediumSchema,
} from './policy';

/**
 * The sandbox request, camelCase JSON, and the fully resolved spec the policy
 * engine produces from it. Structural only: quantities, names, CIDRs and every policy rule are
 * checked by `@paddock/policy`'s `resolveSandboxSpec`, which reports field paths and rules.
 */

export const SANDBOX_MODES = [
  'SANDBOX_MODE_UNSPECIFIED',
  'SANDBOX_MODE_SERVERLESS',
  'SANDBOX_MODE_CKS',
] as const;
export const SandboxModeSchema = z.enum(SANDBOX_MODES);
export type SandboxMode = z.infer<typeof SandboxModeSchema>;

/** `Gpu { count, selector oneof { type, memoryGb } }`. */
export const GpuSchema = z.strictObject({
  count: Int64Schema.optional(),
  type: z.string().optional(),
  memoryGb: Int64Schema.optional(),
});
export type Gpu = z.infer<typeof GpuSchema>;

export const ResourcesSchema = z.strictObject({
  cpu: QuantitySchema.optional(),
  memory: QuantitySchema.optional(),
  gpu: GpuSchema.optional(),
});
export type Resources = z.infer<typeof ResourcesSchema>;

export const ResourceRequirementsSchema = z.strictObject({
  requests: ResourcesSchema.optional(),
  limits: ResourcesSchema.optional(),
});
export type ResourceRequirements = z.infer<typeof ResourceRequirementsSchema>;

export const SecurityContextSchema = z.strictObject({
  runAsUser: Int64Schema.optional(),
  runAsGroup: Int64Schema.optional(),
  privileged: z.boolean().optional(),
  allowPrivilegeEscalation: z.boolean().optional(),
  readOnlyRootFilesystem: z.boolean().optional(),
  capabilitiesAdd: z.array(z.string()).optional(),
  capabilitiesDrop: z.array(z.string()).optional(),
  seccompProfile: z.string().optional(),
});
export type SecurityContext = z.infer<typeof SecurityContextSchema>;

/** A file written at startup: absolute `path`, base64 `content`. */
export const FileMountSchema = z.strictObject({ path: z.string(), content: z.string() });
export type FileMount = z.infer<typeof FileMountSchema>;

export const VolumeMountSchema = z.strictObject({
  volume: z.string(),
  mountPath: z.string(),
  readOnly: z.boolean().optional(),
  subPath: z.string().optional(),
});
export type VolumeMount = z.infer<typeof VolumeMountSchema>;

export const ContainerSchema = z.strictObject({
  name: z.string().optional(),
  image: z.string().optional(),
  /** Empty = image entrypoint. The product's shape is a string; an argv list is also accepted. */
  command: z.union([z.string(), z.array(z.string())]).optional(),
  args: z.array(z.string()).optional(),
  environmentVariables: z.record(z.string(), z.string()).optional(),
  /** Guaranteed allocation (requests = limits). Mutually exclusive with `resourceRequirements`. */
  resources: ResourcesSchema.optional(),
  resourceRequirements: ResourceRequirementsSchema.optional(),
  workingDir: z.string().optional(),
  securityContext: SecurityContextSchema.optional(),
  files: z.array(FileMountSchema).optional(),
  volumeMounts: z.array(VolumeMountSchema).optional(),
  /** Newest schema: marks the primary container. */
  primary: z.boolean().optional(),
  /** Passed through untouched (resolved by other planes). */
  secretStores: z.array(z.record(z.string(), z.unknown())).optional(),
  imagePullCredentials: z.record(z.string(), z.unknown()).optional(),
  startupProbe: z.record(z.string(), z.unknown()).optional(),
});
export type Container = z.infer<typeof ContainerSchema>;

export const ScratchVolumeSchema = z.strictObject({
  /** `10Gi`; MEMORY medium may use `N%` of the resolved memory request. */
  size: QuantitySchema.optional(),
  medium: StorageMediumSchema.optional(),
  restoreFromSnapshotId: z.string().optional(),
});
export type ScratchVolume = z.infer<typeof ScratchVolumeSchema>;

export const SandboxVolumeSchema = z.strictObject({
  name: z.string(),
  scratch: ScratchVolumeSchema.optional(),
  volumeId: z.string().optional(),
});
export type SandboxVolume = z.infer<typeof SandboxVolumeSchema>;

export const NetworkOptionsSchema = z.strictObject({
  egress: z.array(EgressRuleSchema).optional(),
  ingress: z.array(IngressRuleSchema).optional(),
  denyEgress: z.boolean().optional(),
  denyIngress: z.boolean().optional(),
  dnsEgress: z
    .enum(['DNS_EGRESS_MODE_UNSPECIFIED', 'DNS_EGRESS_MODE_ALLOW', 'DNS_EGRESS_MODE_DENY'])
    .optional(),
});
export type NetworkOptions = z.infer<typeof NetworkOptionsSchema>;

/** The single container a request gets when it names none, so `{}` takes every default. */
export const DEFAULT_CONTAINER_NAME = 'main';

export const SandboxSpecSchema = z.strictObject({
  containers: z
    .array(ContainerSchema)
    .optional()
    .transform((c) => c ?? [{ name: DEFAULT_CONTAINER_NAME }]),
  primaryContainer: z.string().optional(),
  initContainers: z.array(ContainerSchema).optional(),
  volumes: z.array(SandboxVolumeSchema).optional(),
  /** Ports and reachability intent; passed through to the runner. */
  services: z.array(z.record(z.string(), z.unknown())).optional(),
  /** 0/omitted = platform default (not unbounded); above 30 days is rejected. */
  maxLifetimeSeconds: Int64Schema.optional(),
  networkIds: z.array(z.string()).optional(),
  objectStorageAccess: z.record(z.string(), z.unknown()).optional(),
  tags: z.array(z.string()).optional(),
  runnerIds: z.array(z.string()).optional(),
  network: NetworkOptionsSchema.optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  instanceType: z.string().optional(),
  mode: SandboxModeSchema.optional(),
  runtimeClass: z.string().optional(),
});
export type SandboxSpec = z.infer<typeof SandboxSpecSchema>;
export type SandboxSpecInput = z.input<typeof SandboxSpecSchema>;

// ---------------------------------------------------------------------------------------------
// Resolved spec: everything in base units, nothing left for a runner to derive.
// ---------------------------------------------------------------------------------------------

export const ResolvedResourceAmountsSchema = z.object({
  cpuMillis: z.number().int(),
  memoryBytes: z.number().int(),
  gpuCount: z.number().int(),
  gpuType: z.string().optional(),
  gpuMemoryGb: z.number().int().optional(),
});
export type ResolvedResourceAmounts = z.infer<typeof ResolvedResourceAmountsSchema>;

export const ResolvedSecurityContextSchema = z.object({
  runAsUser: z.number().int().nullable(),
  runAsGroup: z.number().int().nullable(),
  privileged: z.boolean(),
  allowPrivilegeEscalation: z.boolean(),
  readOnlyRootFilesystem: z.boolean(),
  capabilitiesAdd: z.array(z.string()),
  capabilitiesDrop: z.array(z.string()),
  seccompProfile: z.string(),
});
export type ResolvedSecurityContext = z.infer<typeof ResolvedSecurityContextSchema>;

/** Where a resolved value came from: the request, the policy, or the platform's runtime default. */
export const VALUE_SOURCES = ['spec', 'policy', 'platform'] as const;
export const ValueSourceSchema = z.enum(VALUE_SOURCES);
export type ValueSource = z.infer<typeof ValueSourceSchema>;

export const ResolvedContainerSchema = z.object({
  name: z.string(),
  image: z.string(),
  imageSource: ValueSourceSchema,
  /**
   * The policy admits this by-tag image only if the tag resolves to one of these digests (its
   * allowed images pin the repository); the runner checks them against the manifest it resolves.
   * Absent = no condition.
   */
  imageDigests: z.array(z.string()).optional(),
  /** argv prefix; empty = image entrypoint. */
  command: z.array(z.string()),
  args: z.array(z.string()),
  env: z.record(z.string(), z.string()),
  workingDir: z.string().nullable(),
  primary: z.boolean(),
  resources: z.object({
    requests: ResolvedResourceAmountsSchema,
    limits: ResolvedResourceAmountsSchema,
  }),
  /** Which layer supplied cpu and memory. */
  resourceSources: z.object({ cpu: ValueSourceSchema, memory: ValueSourceSchema }),
  securityContext: ResolvedSecurityContextSchema,
  files: z.array(FileMountSchema),
  volumeMounts: z.array(
    z.object({
      volume: z.string(),
      mountPath: z.string(),
      readOnly: z.boolean(),
      subPath: z.string().nullable(),
    }),
  ),
  passthrough: z.record(z.string(), z.unknown()),
});
export type ResolvedContainer = z.infer<typeof ResolvedContainerSchema>;

export const ResolvedVolumeSchema = z.object({
  name: z.string(),
  kind: z.enum(['scratch', 'registered']),
  medium: z.enum(['STORAGE_MEDIUM_DISK', 'STORAGE_MEDIUM_MEMORY']),
  /** Scratch size in bytes (percent sizes resolved against the total memory request). */
  sizeBytes: z.number().int().nullable(),
  sizeSource: ValueSourceSchema,
  volumeId: z.string().nullable(),
  restoreFromSnapshotId: z.string().nullable(),
});
export type ResolvedVolume = z.infer<typeof ResolvedVolumeSchema>;

/**
 * Resolved network intent. `denyAll` = deny everything; otherwise `rules` are allow-only over
 * default-deny, and `unrestricted` (no rules, not denied) means the runner's open default.
 */
export const ResolvedEgressSchema = z.object({
  denyAll: z.boolean(),
  unrestricted: z.boolean(),
  rules: z.array(EgressRuleSchema),
  source: z.enum(['spec', 'deny', 'policy-default', 'runner-default']),
});
export type ResolvedEgress = z.infer<typeof ResolvedEgressSchema>;
export type ResolvedNetworkSource = ResolvedEgress['source'];

export const ResolvedIngressSchema = z.object({
  denyAll: z.boolean(),
  unrestricted: z.boolean(),
  rules: z.array(IngressRuleSchema),
  source: z.enum(['spec', 'deny', 'policy-default', 'runner-default']),
});
export type ResolvedIngress = z.infer<typeof ResolvedIngressSchema>;

/** What the policy `base` added (attachments always apply, whatever the spec says). */
export const BaseAttachmentsSchema = z.object({
  /** Admin-pinned pod annotations (win over the sandbox's on a key collision). */
  annotations: z.record(z.string(), z.string()),
  labels: z.record(z.string(), z.string()),
  /** Platform sidecar containers from `base.containers`, counted in the resource ceilings. */
  containers: z.array(
    z.object({ name: z.string(), cpuMillis: z.number().int(), memoryBytes: z.number().int() }),
  ),
  /** The rest of the pod-spec fragment (tolerations, nodeSelector, volumes, schedulerName...), verbatim. */
  podSpec: z.record(z.string(), z.unknown()),
});
export type BaseAttachments = z.infer<typeof BaseAttachmentsSchema>;

export const EffectiveResourcesSchema = z.object({
  cpu: z.string(),
  memory: z.string(),
  gpuCount: z.number().int(),
});

export const ResolvedSandboxSpecSchema = z.object({
  containers: z.array(ResolvedContainerSchema),
  initContainers: z.array(ResolvedContainerSchema),
  primaryContainer: z.string(),
  volumes: z.array(ResolvedVolumeSchema),
  services: z.array(z.record(z.string(), z.unknown())),
  lifetimeSeconds: z.number().int(),
  lifetimeSource: ValueSourceSchema,
  /** null = no RuntimeClass set by policy/spec; the runner applies its own selection. */
  runtimeClass: z.string().nullable(),
  runtimeClassSource: z.enum(['pin', 'policy-default', 'runner']),
  egress: ResolvedEgressSchema,
  ingress: ResolvedIngressSchema,
  annotations: z.record(z.string(), z.string()),
  tags: z.array(z.string()),
  runnerIds: z.array(z.string()),
  networkIds: z.array(z.string()),
  instanceType: z.string().nullable(),
  mode: SandboxModeSchema,
  objectStorageAccess: z.record(z.string(), z.unknown()).nullable(),
  baseAttachments: BaseAttachmentsSchema,
  /** Status echoes of what the policy resolved. Sums of requests across the sandbox's containers. */
  effectiveResources: EffectiveResourcesSchema,
  effectiveResourceRequirements: z.array(
    z.object({
      container: z.string(),
      requests: z.object({ cpu: z.string(), memory: z.string(), gpuCount: z.number().int() }),
      limits: z.object({ cpu: z.string(), memory: z.string(), gpuCount: z.number().int() }),
    }),
  ),
  effectiveMaxLifetimeSeconds: z.number().int(),
  effectiveEgress: ResolvedEgressSchema,
  effectiveIngress: ResolvedIngressSchema,
  /** `<node-default>` when no RuntimeClass is set. */
  effectiveRuntimeClass: z.string(),
});
export type ResolvedSandboxSpec = z.infer<typeof ResolvedSandboxSpecSchema>;

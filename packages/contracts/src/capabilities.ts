import { z } from 'zod';

/**
 * What a runner can enforce. The policy engine rejects a sandbox whose resolved spec needs
 * something the chosen runner cannot honour (a network rule kind it cannot enforce, a runtime
 * class it does not have...), rather than silently ignoring it.
 */
export const EGRESS_RULE_KINDS = ['cidr', 'httpsHostname', 'tenant', 'any', 'selector'] as const;
export const EgressRuleKindSchema = z.enum(EGRESS_RULE_KINDS);
export type EgressRuleKind = z.infer<typeof EgressRuleKindSchema>;

export const INGRESS_RULE_KINDS = ['cidr', 'tenant', 'any'] as const;
export const IngressRuleKindSchema = z.enum(INGRESS_RULE_KINDS);
export type IngressRuleKind = z.infer<typeof IngressRuleKindSchema>;

/**
 * Sandbox spec features a backend may or may not honour. The baseline every backend honours (one
 * container's image, command, args, env, working directory, CPU and memory, files, lifetime) is no
 * feature; everything beyond it is named here, so a runner declares what it honours as data and
 * the policy engine refuses, naming the field, a spec that uses a feature its runner lacks.
 * `@paddock/policy`'s `specFeatureUses` maps a request's fields to these names.
 */
export const SPEC_FEATURES = [
  /** More than one entry in `containers` (and choosing the primary among them). */
  'containers.multiple',
  'initContainers',
  /** `volumes[].scratch`: a scratch volume (its medium is checked against `storageMedia`). */
  'volumes.scratch',
  /** `volumes[].volumeId`: a registered (persistent) volume. */
  'volumes.registered',
  'volumes.restoreFromSnapshot',
  'volumeMounts',
  'volumeMounts.readOnly',
  'volumeMounts.subPath',
  'services',
  'startupProbe',
  'secretStores',
  'imagePullCredentials',
  'securityContext.runAsUser',
  'securityContext.runAsGroup',
  /** `readOnlyRootFilesystem: true`. */
  'securityContext.readOnlyRootFilesystem',
  /** `readOnlyRootFilesystem: false` asked for explicitly (a backend may only offer a read-only root). */
  'securityContext.writableRootFilesystem',
  /** `allowPrivilegeEscalation: true` (the policy must allow it too). */
  'securityContext.allowPrivilegeEscalation',
  'securityContext.capabilitiesAdd',
  'securityContext.capabilitiesDrop',
  'securityContext.seccompProfile',
  'annotations',
  'objectStorageAccess',
  'networkIds',
  'instanceType',
  'gpu.memoryGb',
  'network.dnsEgress',
  /** What the runner policy's `base` attaches to every sandbox: annotations, labels, sidecars, pod fields. */
  'base.annotations',
  'base.labels',
  'base.containers',
  'base.podSpec',
] as const;
export const SpecFeatureSchema = z.enum(SPEC_FEATURES);
export type SpecFeature = z.infer<typeof SpecFeatureSchema>;

export const RunnerCapabilitiesSchema = z.object({
  /** `namespaces` (local bubblewrap backend: dev and single-machine use) or `runtime-class` (Kubernetes). */
  isolation: z.enum(['namespaces', 'runtime-class']),
  /** Egress rule kinds the runner enforces. Deny-all egress is always enforceable. */
  egressRuleKinds: z.array(EgressRuleKindSchema),
  /** Ingress rule kinds the runner enforces. */
  ingressRuleKinds: z.array(IngressRuleKindSchema),
  /** Whether the runner can grant unrestricted egress (the local backend shares the host network). */
  supportsEgress: z.boolean(),
  runtimeClasses: z.array(z.string()),
  gpuTypes: z.array(z.string()),
  /**
   * GPUs the runner can attach to one container: 0 for a runner with none (the local backend).
   * Absent = not bounded by the runner (policy-only tooling, older runners).
   */
  maxGpuCount: z.number().int().nonnegative().optional(),
  architectures: z.array(z.string()),
  instanceTypes: z.array(z.string()),
  storageMedia: z.array(z.enum(['STORAGE_MEDIUM_DISK', 'STORAGE_MEDIUM_MEMORY'])),
  supportsPrivileged: z.boolean(),
  /** Largest single sandbox the runner could ever host (quantities), if bounded. */
  maxCpu: z.string().optional(),
  maxMemory: z.string().optional(),
  /** Images the runner can resolve (local backend: the configured image map). Empty = any. */
  images: z.array(z.string()).default([]),
  /** Image used for a container that names none, when the runner has a built-in one. */
  defaultImage: z.string().optional(),
  /**
   * The spec features the runner's backend honours. Absent (a runner older than the list) =
   * none: a spec using any of them is refused rather than launched without it.
   */
  specFeatures: z.array(SpecFeatureSchema).default([]),
});
export type RunnerCapabilities = z.infer<typeof RunnerCapabilitiesSchema>;

/** Capabilities of a runner that can enforce everything; handy default for policy-only tooling. */
export const FULL_CAPABILITIES: RunnerCapabilities = {
  isolation: 'runtime-class',
  egressRuleKinds: [...EGRESS_RULE_KINDS],
  ingressRuleKinds: [...INGRESS_RULE_KINDS],
  supportsEgress: true,
  runtimeClasses: [],
  gpuTypes: [],
  architectures: ['amd64'],
  instanceTypes: [],
  storageMedia: ['STORAGE_MEDIUM_DISK', 'STORAGE_MEDIUM_MEMORY'],
  supportsPrivileged: true,
  images: [],
  specFeatures: [...SPEC_FEATURES],
};

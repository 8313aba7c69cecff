import {
  CidrBlockSchema,
  ContainerSchema,
  EgressRuleSchema,
  FileMountSchema,
  GpuSchema,
  IngressRuleSchema,
  NetworkOptionsSchema,
  PortRangeSchema,
  ResourceRequirementsSchema,
  ResourcesSchema,
  SandboxSpecSchema,
  SandboxVolumeSchema,
  ScratchVolumeSchema,
  SecurityContextSchema,
  SelectorBlockSchema,
  VolumeMountSchema,
} from '@paddock/contracts';

/**
 * The fields of every level of a sandbox spec, taken from the zod schema that the other planes
 * parse with, so the hand-written reader and the schema cannot drift apart on which keys exist.
 * Computed once when the module loads; the hot path only does `Set#has`.
 *
 * Each level also lists what the reader reads (`reads`), typed as an exhaustive record of the
 * schema's keys: a field added to the schema fails the typecheck here until the reader handles it,
 * and `test/spec-schema-agreement.spec.ts` compares the two at run time as well, so a field is
 * never admitted by its key and then silently dropped.
 */

/** What a zod object schema exposes that this module needs (no zod import in the engine). */
interface ObjectSchema {
  readonly shape: Readonly<Record<string, unknown>>;
}

export interface SpecLevel {
  /** Where the level sits in a spec, for messages and tests (`containers[]`, `network`...). */
  readonly at: string;
  readonly schema: ObjectSchema;
  /** The schema's keys at this level: what `checkKeys` admits. */
  readonly keys: ReadonlySet<string>;
  /** The keys the reader reads at this level. */
  readonly reads: ReadonlySet<string>;
}

function level<S extends ObjectSchema>(
  at: string,
  schema: S,
  reads: { readonly [K in keyof S['shape']]: true },
): SpecLevel {
  return {
    at,
    schema,
    keys: new Set(Object.keys(schema.shape)),
    reads: new Set(Object.keys(reads)),
  };
}

/** Keys the schema declares at a level and the reader does not read (must be empty). */
export function unreadFields(l: Pick<SpecLevel, 'schema' | 'reads'>): string[] {
  return Object.keys(l.schema.shape)
    .filter((k) => !l.reads.has(k))
    .sort();
}

/** Keys the reader reads at a level that the schema does not declare (must be empty). */
export function fieldsUnknownToSchema(l: Pick<SpecLevel, 'schema' | 'reads'>): string[] {
  return [...l.reads].filter((k) => !Object.hasOwn(l.schema.shape, k)).sort();
}

export const SPEC = level('(spec)', SandboxSpecSchema, {
  containers: true,
  primaryContainer: true,
  initContainers: true,
  volumes: true,
  services: true,
  maxLifetimeSeconds: true,
  networkIds: true,
  objectStorageAccess: true,
  tags: true,
  runnerIds: true,
  network: true,
  annotations: true,
  instanceType: true,
  mode: true,
  runtimeClass: true,
});
export const CONTAINER = level('containers[]', ContainerSchema, {
  name: true,
  image: true,
  command: true,
  args: true,
  environmentVariables: true,
  resources: true,
  resourceRequirements: true,
  workingDir: true,
  securityContext: true,
  files: true,
  volumeMounts: true,
  primary: true,
  secretStores: true,
  imagePullCredentials: true,
  startupProbe: true,
});
export const RESOURCES = level('containers[].resources', ResourcesSchema, {
  cpu: true,
  memory: true,
  gpu: true,
});
export const REQUIREMENTS = level('containers[].resourceRequirements', ResourceRequirementsSchema, {
  requests: true,
  limits: true,
});
export const GPU = level('containers[].resources.gpu', GpuSchema, {
  count: true,
  type: true,
  memoryGb: true,
});
export const SECURITY = level('containers[].securityContext', SecurityContextSchema, {
  runAsUser: true,
  runAsGroup: true,
  privileged: true,
  allowPrivilegeEscalation: true,
  readOnlyRootFilesystem: true,
  capabilitiesAdd: true,
  capabilitiesDrop: true,
  seccompProfile: true,
});
export const FILE = level('containers[].files[]', FileMountSchema, { path: true, content: true });
export const MOUNT = level('containers[].volumeMounts[]', VolumeMountSchema, {
  volume: true,
  mountPath: true,
  readOnly: true,
  subPath: true,
});
export const VOLUME = level('volumes[]', SandboxVolumeSchema, {
  name: true,
  scratch: true,
  volumeId: true,
});
export const SCRATCH = level('volumes[].scratch', ScratchVolumeSchema, {
  size: true,
  medium: true,
  restoreFromSnapshotId: true,
});
export const NETWORK = level('network', NetworkOptionsSchema, {
  egress: true,
  ingress: true,
  denyEgress: true,
  denyIngress: true,
  dnsEgress: true,
});
// Network rules are read by the same checker for policies and sandboxes (see network.ts).
export const EGRESS_RULE = level('network.egress[]', EgressRuleSchema, {
  cidr: true,
  httpsHostname: true,
  dnsName: true,
  tenant: true,
  any: true,
  selector: true,
  ports: true,
  httpsHostnameExcept: true,
  dnsNameExcept: true,
});
export const INGRESS_RULE = level('network.ingress[]', IngressRuleSchema, {
  cidr: true,
  tenant: true,
  any: true,
  ports: true,
});
export const CIDR_BLOCK = level('network.egress[].cidr', CidrBlockSchema, {
  cidr: true,
  except: true,
});
export const SELECTOR = level('network.egress[].selector', SelectorBlockSchema, {
  podLabels: true,
  namespaceLabels: true,
});
export const PORT = level('network.egress[].ports[]', PortRangeSchema, {
  protocol: true,
  port: true,
  endPort: true,
});

/** Every level, for the agreement test. */
export const SPEC_LEVELS: readonly SpecLevel[] = [
  SPEC,
  CONTAINER,
  RESOURCES,
  REQUIREMENTS,
  GPU,
  SECURITY,
  FILE,
  MOUNT,
  VOLUME,
  SCRATCH,
  NETWORK,
  EGRESS_RULE,
  INGRESS_RULE,
  CIDR_BLOCK,
  SELECTOR,
  PORT,
];

import { z } from 'zod';

/**
 * The runner policy document, camelCase JSON. Every group is optional; `{}` is the
 * valid, fully permissive posture.
 *
 * This schema is deliberately STRUCTURAL: it checks types and shapes only. The semantic rules
 * (Kubernetes quantities, canonical CIDRs, ranges, "exactly one peer", defaults inside allowlists...)
 * live in `@paddock/policy`'s `validatePolicy`, which names the field path and the rule of every error.
 * Objects are strict so a typo (`maxCPU`) is an error rather than a silently ignored constraint.
 */

/** A Kubernetes quantity (`500m`, `1.5`, `2Gi`). YAML may hand us a bare number (`default_cpu: 1`). */
export const QuantitySchema = z.union([z.string(), z.number()]);
export type Quantity = z.infer<typeof QuantitySchema>;

/**
 * proto3 JSON serializes int64 as a string (`"maxGpuCount": "2"`); YAML and hand-written JSON use a
 * number. Both are accepted and normalized to a number. Range checks (negative, unsafe) happen in
 * `validatePolicy`, which can still see the normalized value.
 */
export const Int64Schema = z
  .union([
    z.number().int(),
    z.string().regex(/^-?\d{1,20}$/, 'expected an integer or a decimal integer string'),
  ])
  .transform((v) => (typeof v === 'string' ? Number(v) : v));
export type Int64Input = z.input<typeof Int64Schema>;

export const TENANT_SCOPES = [
  'TENANT_SCOPE_SAME_USER',
  'TENANT_SCOPE_SAME_ORG',
  'TENANT_SCOPE_SANDBOX_NETWORK',
] as const;
export const TenantScopeSchema = z.enum(TENANT_SCOPES);
export type TenantScope = z.infer<typeof TenantScopeSchema>;

export const PORT_PROTOCOLS = ['TCP', 'UDP', 'SCTP'] as const;
export const PortProtocolSchema = z.enum(PORT_PROTOCOLS);
export type PortProtocol = z.infer<typeof PortProtocolSchema>;

export const STORAGE_MEDIA = [
  'STORAGE_MEDIUM_UNSPECIFIED',
  'STORAGE_MEDIUM_DISK',
  'STORAGE_MEDIUM_MEMORY',
] as const;
export const StorageMediumSchema = z.enum(STORAGE_MEDIA);
export type StorageMedium = z.infer<typeof StorageMediumSchema>;

export const DNS_EGRESS_MODES = [
  'DNS_EGRESS_MODE_UNSPECIFIED',
  'DNS_EGRESS_MODE_ALLOW',
  'DNS_EGRESS_MODE_DENY',
] as const;
export const DnsEgressModeSchema = z.enum(DNS_EGRESS_MODES);
export type DnsEgressMode = z.infer<typeof DnsEgressModeSchema>;

/** `{protocol (default TCP), port 1..65535, endPort 0..65535 (0/omitted = single port)}`; ranges checked later. */
export const PortRangeSchema = z.strictObject({
  protocol: PortProtocolSchema.optional(),
  port: z.number().int(),
  endPort: z.number().int().optional(),
});
export type PortRange = z.infer<typeof PortRangeSchema>;

export const CidrBlockSchema = z.strictObject({
  cidr: z.string(),
  except: z.array(z.string()).optional(),
});
export type CidrBlock = z.infer<typeof CidrBlockSchema>;

export const SelectorBlockSchema = z.strictObject({
  podLabels: z.record(z.string(), z.string()),
  namespaceLabels: z.record(z.string(), z.string()).optional(),
});
export type SelectorBlock = z.infer<typeof SelectorBlockSchema>;

/**
 * One egress rule. Exactly one peer must be set (checked semantically): `cidr`, `httpsHostname`
 * (legacy spelling `dnsName`), `tenant`, `any` or `selector`. `httpsHostnameExcept` (legacy
 * `dnsNameExcept`) is valid only inside a policy's `allowedEgress` envelope.
 */
export const EgressRuleSchema = z.strictObject({
  cidr: CidrBlockSchema.optional(),
  httpsHostname: z.string().optional(),
  /** Legacy alias of `httpsHostname`; setting both is refused. */
  dnsName: z.string().optional(),
  tenant: TenantScopeSchema.optional(),
  any: z.boolean().optional(),
  selector: SelectorBlockSchema.optional(),
  ports: z.array(PortRangeSchema).optional(),
  httpsHostnameExcept: z.array(z.string()).optional(),
  /** Legacy alias of `httpsHostnameExcept`. */
  dnsNameExcept: z.array(z.string()).optional(),
});
export type EgressRule = z.infer<typeof EgressRuleSchema>;

/** One ingress rule: exactly one source among `cidr`, `tenant`, `any` (no hostname, no selector). */
export const IngressRuleSchema = z.strictObject({
  cidr: CidrBlockSchema.optional(),
  tenant: TenantScopeSchema.optional(),
  any: z.boolean().optional(),
  ports: z.array(PortRangeSchema).optional(),
});
export type IngressRule = z.infer<typeof IngressRuleSchema>;

export const ResourceConstraintsSchema = z.strictObject({
  maxCpu: QuantitySchema.optional(),
  maxMemory: QuantitySchema.optional(),
  minCpu: QuantitySchema.optional(),
  minMemory: QuantitySchema.optional(),
  defaultCpu: QuantitySchema.optional(),
  defaultMemory: QuantitySchema.optional(),
  /**
   * Paddock extension (Kubernetes LimitRange `defaultRequest`): the request given to a container
   * that declares no CPU (or memory), below the limit `defaultCpu` (`defaultMemory`, else the
   * platform's) it still gets. Omitted = requests equal the default limit.
   */
  defaultCpuRequest: QuantitySchema.optional(),
  defaultMemoryRequest: QuantitySchema.optional(),
  /** Omitted = no cap; explicit 0 forbids GPUs. */
  maxGpuCount: Int64Schema.optional(),
  cpuCeiling: QuantitySchema.optional(),
  memoryCeiling: QuantitySchema.optional(),
  requireLimits: z.boolean().optional(),
});
export type ResourceConstraints = z.infer<typeof ResourceConstraintsSchema>;

export const ImageConstraintsSchema = z.strictObject({
  allowedRegistries: z.array(z.string()).optional(),
  allowedImages: z.array(z.string()).optional(),
});
export type ImageConstraints = z.infer<typeof ImageConstraintsSchema>;

export const NetworkConstraintsSchema = z.strictObject({
  allowedEgress: z.array(EgressRuleSchema).optional(),
  defaultEgress: z.array(EgressRuleSchema).optional(),
  denyHttpsHostnameRules: z.boolean().optional(),
  /** Legacy alias of `denyHttpsHostnameRules` (Terraform `deny_dns`). */
  denyDns: z.boolean().optional(),
  allowedIngress: z.array(IngressRuleSchema).optional(),
  defaultIngress: z.array(IngressRuleSchema).optional(),
  dnsEgress: DnsEgressModeSchema.optional(),
});
export type NetworkConstraints = z.infer<typeof NetworkConstraintsSchema>;

export const SecurityConstraintsSchema = z.strictObject({
  allowPrivileged: z.boolean().optional(),
  allowedCapabilities: z.array(z.string()).optional(),
  allowedSeccompProfiles: z.array(z.string()).optional(),
  allowedRuntimeClasses: z.array(z.string()).optional(),
  defaultCpuRuntimeClass: z.string().optional(),
  defaultGpuRuntimeClass: z.string().optional(),
});
export type SecurityConstraints = z.infer<typeof SecurityConstraintsSchema>;

export const InstanceConstraintsSchema = z.strictObject({
  allowedInstanceTypes: z.array(z.string()).optional(),
});
export type InstanceConstraints = z.infer<typeof InstanceConstraintsSchema>;

export const LifecycleConstraintsSchema = z.strictObject({
  /** 0..2592000; 0 leaves the platform default (600 s). */
  defaultLifetimeSeconds: Int64Schema.optional(),
  /**
   * Paddock extension: a sandbox with no exec, file or log traffic for this long is paused
   * (frozen, its CPU request released), never deleted; the next call resumes it. 0/absent = never.
   * 60..2592000. Fixed for a sandbox when it is created.
   */
  idleTimeoutSeconds: Int64Schema.optional(),
});
export type LifecycleConstraints = z.infer<typeof LifecycleConstraintsSchema>;

export const MetadataConstraintsSchema = z.strictObject({
  deniedAnnotationPrefixes: z.array(z.string()).optional(),
  /** 0 = no limit. */
  maxAnnotationCount: Int64Schema.optional(),
});
export type MetadataConstraints = z.infer<typeof MetadataConstraintsSchema>;

export const VolumeConstraintsSchema = z.strictObject({
  allowedMedia: z.array(StorageMediumSchema).optional(),
  maxSize: QuantitySchema.optional(),
});
export type VolumeConstraints = z.infer<typeof VolumeConstraintsSchema>;

export const PolicyConstraintsSchema = z.strictObject({
  resources: ResourceConstraintsSchema.optional(),
  image: ImageConstraintsSchema.optional(),
  network: NetworkConstraintsSchema.optional(),
  security: SecurityConstraintsSchema.optional(),
  instance: InstanceConstraintsSchema.optional(),
  lifecycle: LifecycleConstraintsSchema.optional(),
  metadata: MetadataConstraintsSchema.optional(),
  volumes: VolumeConstraintsSchema.optional(),
});
export type PolicyConstraints = z.infer<typeof PolicyConstraintsSchema>;

export const ControlPlaneAccessSchema = z.strictObject({
  /** Absent = no source-IP restriction; present with empty `cidrs` = every public source denied. */
  sourceIpAllowlist: z.strictObject({ cidrs: z.array(z.string()).optional() }).optional(),
});
export type ControlPlaneAccess = z.infer<typeof ControlPlaneAccessSchema>;

export const PolicySchema = z.strictObject({
  displayName: z.string().optional(),
  /** Runtime defaults and attachments; on Kubernetes a pod-spec fragment. Free-form JSON object. */
  base: z.record(z.string(), z.unknown()).optional(),
  constraints: PolicyConstraintsSchema.optional(),
  controlPlaneAccess: ControlPlaneAccessSchema.optional(),
});
/** A policy after parsing (int64 fields normalized to numbers). */
export type Policy = z.infer<typeof PolicySchema>;
/** A policy as it may arrive on the wire (int64 fields possibly strings). */
export type PolicyInput = z.input<typeof PolicySchema>;

/** Hard caps shared by every plane (seeds: the encoded document is capped at 256 KiB). */
export const POLICY_MAX_ENCODED_BYTES = 262144;
export const POLICY_TOO_LARGE_MESSAGE = 'policy exceeds 256 KiB limit';
/** Platform maximum sandbox lifetime: 30 days. */
export const MAX_LIFETIME_SECONDS = 2_592_000;
/** The shortest idle timeout a policy may set (a shorter one would thrash pause and resume). */
export const MIN_IDLE_TIMEOUT_SECONDS = 10;
/** Fallback lifetime when neither the sandbox nor the policy sets one. */
export const FALLBACK_LIFETIME_SECONDS = 600;
export const MAX_SOURCE_IP_CIDRS = 256;

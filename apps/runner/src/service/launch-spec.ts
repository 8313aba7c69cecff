import type { ResolvedContainer, ResolvedSandboxSpec, SandboxEffectiveFields, SandboxSpec } from '@paddock/contracts';
import { SandboxEffectiveFieldsSchema, SandboxSpecSchema } from '@paddock/contracts';
import { z } from 'zod';
import type { EgressCidrRule, LaunchSpec } from '../backend/sandbox-backend';
import { podLaunchFields } from './launch-pod';
import { podMetadataLaunchFields } from './launch-metadata';
import { launchSecurityOf } from './launch-security';
import { imagePullRegistriesOf, secretEnvNamesOf } from './secret-env';

/** Host-protecting caps the policy has no field for; they come from the runner's configuration. */
export interface SandboxHostCaps {
  pidsMax: number;
  diskBytes: number;
  openFilesMax: number;
}

/** The label under which a sandbox's metadata survives a runner restart (the backend persists labels). */
export const SANDBOX_META_LABEL = 'paddock.dev/sandbox';
export const RUNNER_ID_LABEL = 'paddock.dev/runner-id';

/**
 * What a restarted runner needs to serve an adopted sandbox again exactly as before: the request
 * as accepted and what the policy resolved at its launch (never re-resolved against a newer policy).
 */
export const PersistedSandboxMetaSchema = z.object({
  v: z.literal(1),
  organizationId: z.string().min(1),
  spec: SandboxSpecSchema,
  labels: z.record(z.string(), z.string()),
  effective: SandboxEffectiveFieldsSchema,
  requestFingerprint: z.string(),
  createTime: z.string(),
  /** The capacity the sandbox reserves (its requests), reserved again when a restarted runner adopts it. */
  cpuMillis: z.number().int().nonnegative(),
  memoryBytes: z.number().int().nonnegative(),
});
export type PersistedSandboxMeta = z.infer<typeof PersistedSandboxMetaSchema>;

export function primaryContainerOf(resolved: ResolvedSandboxSpec): ResolvedContainer {
  const primary = resolved.containers.find((c) => c.name === resolved.primaryContainer) ?? resolved.containers[0];
  if (!primary) throw new Error('resolved spec has no container');
  return primary;
}

/** The status echoes of a resolved spec (the `effective*` fields of a sandbox's status). */
export function effectiveFieldsOf(resolved: ResolvedSandboxSpec): SandboxEffectiveFields {
  return {
    effectiveResources: resolved.effectiveResources,
    effectiveResourceRequirements: resolved.effectiveResourceRequirements,
    effectiveMaxLifetimeSeconds: resolved.effectiveMaxLifetimeSeconds,
    effectiveEgress: resolved.effectiveEgress,
    effectiveIngress: resolved.effectiveIngress,
    effectiveRuntimeClass: resolved.effectiveRuntimeClass,
  };
}

/**
 * A pod's total of one amount, as a Kubernetes scheduler counts it: the sum over the containers,
 * or the largest init container's when that is more (init containers run one at a time, before them).
 */
function podTotal(resolved: ResolvedSandboxSpec, amount: (c: ResolvedContainer) => number): number {
  const sum = resolved.containers.reduce((n, c) => n + amount(c), 0);
  return Math.max(sum, ...resolved.initContainers.map(amount));
}

/**
 * CPU and memory the sandbox is capped at (cgroup quota, memory without swap): its containers'
 * limits together (a lone container's are its own), as the sandbox's one cgroup holds them all.
 */
export function limitsOf(resolved: ResolvedSandboxSpec): { cpuMillis: number; memoryBytes: number } {
  const limit = (c: ResolvedContainer, k: 'cpuMillis' | 'memoryBytes'): number => (c.resources.limits[k] > 0 ? c.resources.limits[k] : c.resources.requests[k]);
  return {
    cpuMillis: podTotal(resolved, (c) => limit(c, 'cpuMillis')),
    memoryBytes: podTotal(resolved, (c) => limit(c, 'memoryBytes')),
  };
}

/**
 * CPU and memory the sandbox reserves of the runner's capacity: its containers' requests together,
 * as a Kubernetes scheduler counts them, so sandboxes with small requests under a larger limit
 * pack densely while each stays capped at its limit.
 */
export function reservationOf(resolved: ResolvedSandboxSpec): { cpuMillis: number; memoryBytes: number } {
  return {
    cpuMillis: podTotal(resolved, (c) => c.resources.requests.cpuMillis),
    memoryBytes: podTotal(resolved, (c) => c.resources.requests.memoryBytes),
  };
}

/** The main container's GPUs: count and, when asked for, the model. */
function gpusOf(primary: ResolvedContainer): { gpuCount?: number; gpuType?: string } {
  const { limits, requests } = primary.resources;
  const count = Math.max(limits.gpuCount, requests.gpuCount);
  if (count <= 0) return {};
  const type = limits.gpuType ?? requests.gpuType;
  return { gpuCount: count, ...(type ? { gpuType: type } : {}) };
}

/** The resolved egress grants that are CIDR blocks (every other kind was refused for this runner). */
function egressCidrsOf(resolved: ResolvedSandboxSpec): { egressCidrs?: EgressCidrRule[] } {
  const { egress } = resolved;
  if (egress.denyAll || egress.unrestricted) return {};
  const rules = egress.rules.flatMap((r): EgressCidrRule[] =>
    r.cidr
      ? [
          {
            cidr: r.cidr.cidr,
            except: r.cidr.except ?? [],
            ports: (r.ports ?? []).map((p) => ({ protocol: p.protocol ?? 'TCP', port: p.port, ...(p.endPort !== undefined ? { endPort: p.endPort } : {}) })),
          },
        ]
      : [],
  );
  return rules.length > 0 ? { egressCidrs: rules } : {};
}

/**
 * Maps a resolved, admitted spec to what a backend launches. Pure.
 *
 * Network: unrestricted egress is `network: 'host'` (the backend's own egress path, never the
 * host's network namespace); anything else starts from no network,
 * plus the resolved CIDR grants (`egressCidrs`) for a backend that enforces them. The policy
 * engine has already refused every rule kind the runner's capabilities cannot enforce, so a grant
 * never reaches a backend that would drop it; and nothing here ever widens what was resolved.
 */
export function toLaunchSpec(input: {
  sandboxId: string;
  organizationId: string;
  runnerId: string;
  spec: SandboxSpec;
  resolved: ResolvedSandboxSpec;
  caps: SandboxHostCaps;
  meta: PersistedSandboxMeta;
  /** The primary container's resolved secret values (see `secret-env.ts`); never persisted. */
  secretEnv?: Record<string, string>;
  /** Docker config JSON for the spec's pull credentials; never persisted. */
  imagePullDockerConfig?: string;
}): LaunchSpec {
  const { resolved } = input;
  const primary = primaryContainerOf(resolved);
  const secretEnvNames = secretEnvNamesOf(input.spec.containers.find((c) => c.name === primary.name) ?? input.spec.containers[0]);
  const { cpuMillis, memoryBytes } = limitsOf(resolved);
  const reserved = reservationOf(resolved);
  return {
    sandboxId: input.sandboxId,
    organizationId: input.organizationId,
    runnerId: input.runnerId,
    image: primary.image,
    ...(primary.imageDigests ? { imageDigests: primary.imageDigests } : {}),
    command: [...primary.command, ...primary.args],
    env: { ...primary.env, ...input.secretEnv },
    ...(secretEnvNames.length ? { secretEnvNames } : {}),
    ...imagePullOf(input.spec, input.imagePullDockerConfig),
    ...(primary.workingDir ? { workingDir: primary.workingDir } : {}),
    cpuMillis,
    memoryBytes,
    cpuRequestMillis: reserved.cpuMillis,
    memoryRequestBytes: reserved.memoryBytes,
    pidsMax: input.caps.pidsMax,
    diskBytes: input.caps.diskBytes,
    openFilesMax: input.caps.openFilesMax,
    lifetimeSeconds: resolved.lifetimeSeconds,
    network: resolved.egress.unrestricted && !resolved.egress.denyAll ? 'host' : 'none',
    ...egressCidrsOf(resolved),
    ...(resolved.runtimeClass ? { runtimeClassName: resolved.runtimeClass } : {}),
    ...gpusOf(primary),
    files: primary.files.map((f) => ({ path: f.path, content: Buffer.from(f.content, 'base64') })),
    labels: {
      [RUNNER_ID_LABEL]: input.runnerId,
      [SANDBOX_META_LABEL]: JSON.stringify(input.meta),
    },
    ...podLaunchFields(resolved, primary, { diskBytes: input.caps.diskBytes, memoryBytes }),
    ...podMetadataLaunchFields(resolved, primary),
    ...launchSecurityOf(primary),
  };
}

function imagePullOf(spec: SandboxSpec, dockerConfig: string | undefined): Pick<LaunchSpec, 'imagePullRegistries' | 'imagePullDockerConfig'> {
  const registries = imagePullRegistriesOf(spec);
  return registries.length ? { imagePullRegistries: registries, ...(dockerConfig ? { imagePullDockerConfig: dockerConfig } : {}) } : {};
}

/** The sandbox's own metadata from its backend labels (undefined when absent or unreadable). */
export function readSandboxMeta(labels: Record<string, string>): PersistedSandboxMeta | undefined {
  const raw = labels[SANDBOX_META_LABEL];
  if (!raw) return undefined;
  try {
    const r = PersistedSandboxMetaSchema.safeParse(JSON.parse(raw));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

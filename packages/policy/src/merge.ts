import type {
  EgressRule,
  ResolvedContainer,
  ResolvedEgress,
  ResolvedIngress,
  ResolvedSandboxSpec,
  RunnerCapabilities,
  ValueSource,
} from '@paddock/contracts';
import * as m_contracts from '@paddock/contracts';
import { type CompiledPolicy } from './compile';
import * as m_defaults from './defaults';
import { type Dimension, type DimensionRead } from './dimensions';
import * as m_dimensions from './dimensions';
import * as m_quantity from './quantity';
import { type ContainerRead } from './spec/container';
import { type NormRule } from './network';
import { type NetworkRead } from './spec/network';
import { type SpecRead } from './spec/reader';
import { type VolumeRead } from './spec/volumes';
import * as m_violations from './violations';

// Hot-path helpers bound once: transpilers (tsx/esbuild) turn imported names into getter
// calls on every use, which cost ~10% of a resolution. Locals are plain calls.
const { FALLBACK_LIFETIME_SECONDS, MAX_LIFETIME_SECONDS } = m_contracts;
const { PLATFORM_DEFAULTS } = m_defaults;
const { boundsOf, CPU, MEMORY } = m_dimensions;
const { formatCpu, formatMemory } = m_quantity;
const { join } = m_violations;

/**
 * The merge: the request over the policy's defaults over the platform's (the request wins, base
 * attachments always apply). It adds no violations; the constraints are checked afterwards on
 * what it produces, so they see every value with the layer it came from.
 */

/** One container with every default filled, plus what the constraint checks need to know. */
export interface MergedContainer {
  path: string;
  out: ResolvedContainer;
  /** Every cpu/memory amount that applies (written, or the default) and whether a limit was
   * declared or supplied by a policy default (see requireLimits), for the bounds checks. */
  cpu: DimensionRead;
  memory: DimensionRead;
  gpuPath: string;
  /** The request named the image (else a platform or runner default applies). */
  specImage: boolean;
}

export interface Merged {
  containers: MergedContainer[];
  initContainers: MergedContainer[];
  /** Containers then init containers. */
  all: MergedContainer[];
  /** Requests summed over the pod (init containers by max), base sidecars included. */
  totals: { cpu: number; memory: number; gpu: number };
  /** The memory total plus MEMORY scratch volumes (tmpfs counts against memory). */
  memoryWithVolumes: number;
  lifetimeSeconds: number;
  lifetimeSource: ValueSource;
  egress: ResolvedEgress;
  ingress: ResolvedIngress;
  runtimeClass: string | null;
  runtimeClassSource: ResolvedSandboxSpec['runtimeClassSource'];
}

/**
 * Fills a dimension the request left unset, in place: the policy's default (which also counts as
 * a declared limit), else the platform's. With a policy default request (Paddock extension) the
 * request is that and the limit stays the default limit (the policy's, else the platform's), as a
 * Kubernetes LimitRange's `defaultRequest` and `default` do. Returns the layer the value came from.
 */
function fillDefault(r: DimensionRead, path: string, d: Dimension, p: CompiledPolicy): ValueSource {
  const b = boundsOf(p, d);
  const limitFromPolicy = b.default !== undefined;
  const limit = limitFromPolicy ? (b.default as number) : d.platformDefault;
  const raw = limitFromPolicy ? (b.defaultRaw ?? d.format(limit)) : d.format(limit);
  const source: ValueSource = limitFromPolicy ? 'policy' : 'platform';
  if (limitFromPolicy) r.limitDeclared = true;
  r.limit = limit;
  const request = b.defaultRequest;
  if (request === undefined) {
    r.amounts.push({ path, value: limit, raw, isRequest: true, source });
    r.request = limit;
    return source;
  }
  r.request = request;
  r.amounts.push(
    { path, value: request, raw: b.defaultRequestRaw ?? d.format(request), isRequest: true, source: 'policy' },
    { path, value: limit, raw, isRequest: false, source },
  );
  return 'policy';
}

/**
 * Fills one dimension of a container in place (the read is the merge's own from here on): a
 * dimension the request left unset takes the default; a limit alone is also the request, a
 * request alone also the limit. Returns the layer the value came from.
 */
function mergeDimension(
  r: DimensionRead,
  d: Dimension,
  path: string,
  p: CompiledPolicy,
): ValueSource {
  if (r.request === undefined && r.limit === undefined) return fillDefault(r, join(path, `resources.${d.key}`), d, p);
  const request = r.request ?? r.limit ?? 0;
  r.request = request;
  r.limit = r.limit ?? request;
  return 'spec';
}

function mergeContainer(
  r: ContainerRead,
  p: CompiledPolicy,
  caps: RunnerCapabilities,
): MergedContainer {
  const cpuSource = mergeDimension(r.cpu, CPU, r.path, p);
  const memorySource = mergeDimension(r.memory, MEMORY, r.path, p);
  const gpuCount = r.gpu?.count ?? 0;
  const requests = {
    cpuMillis: r.cpu.request,
    memoryBytes: r.memory.request,
    gpuCount,
  } as ResolvedContainer['resources']['requests'];
  const limits = {
    cpuMillis: r.cpu.limit,
    memoryBytes: r.memory.limit,
    gpuCount,
  } as ResolvedContainer['resources']['limits'];
  if (r.gpu?.type !== undefined) requests.gpuType = limits.gpuType = r.gpu.type;
  if (r.gpu?.memoryGb !== undefined) requests.gpuMemoryGb = limits.gpuMemoryGb = r.gpu.memoryGb;
  const specImage = r.image !== undefined && r.image !== '';
  // A container naming no image gets the runner's own default image when it advertises one (the
  // local backend's built-in image), else the platform default; the image checks see it.
  const image = specImage ? (r.image as string) : caps.defaultImage || PLATFORM_DEFAULTS.image;
  return {
    path: r.path,
    out: {
      name: r.name,
      image,
      imageSource: specImage ? 'spec' : 'platform',
      command: r.command,
      args: r.args,
      env: r.env,
      workingDir: r.workingDir,
      primary: false,
      resources: { requests, limits },
      resourceSources: { cpu: cpuSource, memory: memorySource },
      securityContext: r.securityContext,
      files: r.files,
      volumeMounts: r.volumeMounts,
      passthrough: r.passthrough,
    },
    cpu: r.cpu,
    memory: r.memory,
    gpuPath: r.gpuPath,
    specImage,
  };
}

function sumRequests(
  containers: MergedContainer[],
  inits: MergedContainer[],
  p: CompiledPolicy,
): Merged['totals'] {
  let cpu = 0;
  let memory = 0;
  let gpu = 0;
  for (const w of containers) {
    cpu += w.out.resources.requests.cpuMillis;
    memory += w.out.resources.requests.memoryBytes;
    gpu += w.out.resources.requests.gpuCount;
  }
  for (const s of p.base.containers) {
    cpu += s.cpuMillis;
    memory += s.memoryBytes;
  }
  // Init containers run before the others: the pod needs the larger of the two (Kubernetes rule).
  for (const w of inits) {
    cpu = Math.max(cpu, w.out.resources.requests.cpuMillis);
    memory = Math.max(memory, w.out.resources.requests.memoryBytes);
  }
  return { cpu, memory, gpu };
}

/** Sizes percent MEMORY volumes against the memory total; returns memory plus every tmpfs. */
function sizeMemoryVolumes(volumes: VolumeRead[], memory: number): number {
  let withVolumes = memory;
  for (const v of volumes) {
    if (v.out.medium !== 'STORAGE_MEDIUM_MEMORY' || v.out.kind !== 'scratch') continue;
    if (v.percent !== undefined) v.out.sizeBytes = Math.ceil((memory * v.percent) / 100);
    withVolumes += v.out.sizeBytes ?? 0;
  }
  return withVolumes;
}

function mergeLifetime(
  requested: number | undefined,
  p: CompiledPolicy,
): { seconds: number; source: ValueSource } {
  // 0 (or omitted) asks for the default; out-of-range values are refused by the lifetime check.
  if (requested !== undefined && requested > 0 && requested <= MAX_LIFETIME_SECONDS) {
    return { seconds: requested, source: 'spec' };
  }
  if (p.defaultLifetime > 0) return { seconds: p.defaultLifetime, source: 'policy' };
  return { seconds: FALLBACK_LIFETIME_SECONDS, source: 'platform' };
}

/**
 * One direction of the network intent: denied, the request's rules, the policy's default rules,
 * else `fallback` (the runner's own default).
 */
function mergeDirection(
  deny: boolean,
  declared: NormRule[] | null,
  defaults: readonly NormRule[],
  defaultRules: readonly EgressRule[],
  fallback: ResolvedEgress,
): ResolvedEgress {
  if (deny) return { denyAll: true, unrestricted: false, rules: [], source: 'deny' };
  if (declared) {
    return {
      denyAll: false,
      unrestricted: false,
      rules: declared.map((r) => r.rule),
      source: 'spec',
    };
  }
  if (defaults.length) {
    return {
      denyAll: false,
      unrestricted: false,
      // Frozen and shared by every resolution (see compile.ts); nothing downstream mutates it.
      rules: defaultRules as EgressRule[],
      source: 'policy-default',
    };
  }
  return fallback;
}

function mergeEgress(
  net: NetworkRead,
  p: CompiledPolicy,
  caps: RunnerCapabilities,
): ResolvedEgress {
  // Nothing requested, no policy default: the runner's own default, which for a runner that
  // cannot grant egress is deny-all (nothing was asked for, so nothing is narrowed).
  const fallback: ResolvedEgress = caps.supportsEgress
    ? { denyAll: false, unrestricted: true, rules: [], source: 'runner-default' }
    : { denyAll: true, unrestricted: false, rules: [], source: 'runner-default' };
  return mergeDirection(
    net.denyEgress,
    net.declaredEgress ? net.egress : null,
    p.defaultEgress,
    p.defaultEgressRules,
    fallback,
  );
}

function mergeIngress(net: NetworkRead, p: CompiledPolicy): ResolvedIngress {
  // Ingress is allow-only over default-deny on CUSTOM ports: no rule means no extra source.
  const fallback: ResolvedIngress = {
    denyAll: false,
    unrestricted: false,
    rules: [],
    source: 'runner-default',
  };
  return mergeDirection(
    net.denyIngress,
    net.declaredIngress ? net.ingress : null,
    p.defaultIngress,
    p.defaultIngressRules,
    fallback,
  );
}

function mergeRuntimeClass(
  pin: string | undefined,
  containers: MergedContainer[],
  p: CompiledPolicy,
): Pick<Merged, 'runtimeClass' | 'runtimeClassSource'> {
  if (pin !== undefined) return { runtimeClass: pin, runtimeClassSource: 'pin' };
  const hasGpu = containers.some((w) => w.out.resources.requests.gpuCount > 0);
  const d = hasGpu ? p.defaultGpuRuntimeClass : p.defaultCpuRuntimeClass;
  return d
    ? { runtimeClass: d, runtimeClassSource: 'policy-default' }
    : { runtimeClass: null, runtimeClassSource: 'runner' };
}

export function merge(r: SpecRead, p: CompiledPolicy, caps: RunnerCapabilities): Merged {
  const containers = r.containers.map((c) => mergeContainer(c, p, caps));
  const initContainers = r.initContainers.map((c) => mergeContainer(c, p, caps));
  const totals = sumRequests(containers, initContainers, p);
  const lifetime = mergeLifetime(r.requestedLifetime, p);
  const runtime = mergeRuntimeClass(r.runtimeClass, containers, p);
  return {
    containers,
    initContainers,
    all: initContainers.length ? containers.concat(initContainers) : containers,
    totals,
    memoryWithVolumes: sizeMemoryVolumes(r.volumes, totals.memory),
    lifetimeSeconds: lifetime.seconds,
    lifetimeSource: lifetime.source,
    egress: mergeEgress(r.network, p, caps),
    ingress: mergeIngress(r.network, p),
    runtimeClass: runtime.runtimeClass,
    runtimeClassSource: runtime.runtimeClassSource,
  };
}

/** Sandbox annotations overlaid with the admin-pinned ones (plain loops: object spread of these
 * maps was measured at ~8% of a resolution). */
function mergeAnnotations(
  own: Record<string, string>,
  pinned: Record<string, string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in own) out[k] = own[k] as string;
  for (const k in pinned) out[k] = pinned[k] as string;
  return out;
}

/** The resolved spec of an admitted request (called only once every constraint holds). */
export function resolvedSpec(r: SpecRead, m: Merged, p: CompiledPolicy): ResolvedSandboxSpec {
  const containers = m.containers.map((w) => w.out);
  for (const c of containers) c.primary = c.name === r.primaryContainer;
  return {
    containers,
    initContainers: m.initContainers.map((w) => w.out),
    primaryContainer: r.primaryContainer,
    volumes: r.volumes.map((v) => v.out),
    services: r.services,
    lifetimeSeconds: m.lifetimeSeconds,
    lifetimeSource: m.lifetimeSource,
    runtimeClass: m.runtimeClass,
    runtimeClassSource: m.runtimeClassSource,
    egress: m.egress,
    ingress: m.ingress,
    // Admin-pinned pod metadata wins over the sandbox's annotation on a key collision.
    annotations: mergeAnnotations(r.annotations, p.base.annotations),
    tags: r.tags,
    runnerIds: r.runnerIds,
    networkIds: r.networkIds,
    instanceType: r.instanceType,
    mode: r.mode,
    objectStorageAccess: r.objectStorageAccess,
    baseAttachments: p.base,
    effectiveResources: {
      cpu: formatCpu(m.totals.cpu),
      memory: formatMemory(m.totals.memory),
      gpuCount: m.totals.gpu,
    },
    effectiveResourceRequirements: containers.map((c) => ({
      container: c.name,
      requests: {
        cpu: formatCpu(c.resources.requests.cpuMillis),
        memory: formatMemory(c.resources.requests.memoryBytes),
        gpuCount: c.resources.requests.gpuCount,
      },
      limits: {
        cpu: formatCpu(c.resources.limits.cpuMillis),
        memory: formatMemory(c.resources.limits.memoryBytes),
        gpuCount: c.resources.limits.gpuCount,
      },
    })),
    effectiveMaxLifetimeSeconds: m.lifetimeSeconds,
    effectiveEgress: m.egress,
    effectiveIngress: m.ingress,
    effectiveRuntimeClass: m.runtimeClass ?? '<node-default>',
  };
}

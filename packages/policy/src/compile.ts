import type { EgressRule, FieldViolation, IngressRule, Policy } from '@paddock/contracts';
import { DEFAULT_POLICY } from './defaults';
import { checkRules, isObj, type NormRule } from './network';
import { parseCpuMillis, parseMemoryBytes } from './quantity';
import { validatePolicy } from './validate-policy';

/**
 * A validated policy with every quantity, CIDR and list pre-parsed, so resolving a sandbox does
 * no parsing of the policy at all. Compiled once per policy object (WeakMap), which is what makes
 * the hot path cheap: a gateway resolves thousands of requests against the same few policies.
 */
export interface CompiledPolicy {
  policy: Policy;
  maxCpu?: number;
  minCpu?: number;
  maxMemory?: number;
  minMemory?: number;
  defaultCpu?: number;
  defaultMemory?: number;
  defaultCpuRequest?: number;
  defaultMemoryRequest?: number;
  maxGpuCount?: number;
  cpuCeiling?: number;
  memoryCeiling?: number;
  requireLimits: boolean;
  /** cpu and memory bounds side by side, so one checker serves both dimensions (same shape). */
  bounds: { cpu: DimensionBounds; memory: DimensionBounds };
  /** Raw strings for messages. */
  raw: Record<string, string>;
  registries: string[];
  images: string[];
  allowedEgress: NormRule[];
  defaultEgress: NormRule[];
  denyHostnames: boolean;
  allowedIngress: NormRule[];
  defaultIngress: NormRule[];
  allowPrivileged: boolean;
  allowedCapabilities: Set<string>;
  allowedSeccomp: string[];
  allowedRuntimeClasses: string[];
  defaultCpuRuntimeClass?: string;
  defaultGpuRuntimeClass?: string;
  instanceTypes: string[];
  defaultLifetime: number;
  deniedPrefixes: string[];
  maxAnnotations: number;
  media: string[];
  maxVolumeBytes?: number;
  /** The default rules as echoed in resolved specs (frozen: shared by every resolution). */
  defaultEgressRules: readonly EgressRule[];
  defaultIngressRules: readonly IngressRule[];
  /** Memos of pure per-policy answers (same policy, same question): egress/ingress containment by
   * rule key, registry and image-list matches by image reference. */
  memo: {
    egress: Map<string, boolean>;
    /** httpsHostname egress rules by host alone (their key is the host; no string is built). */
    egressHosts: Map<string, boolean>;
    ingress: Map<string, boolean>;
    registries: Map<string, boolean>;
    images: Map<string, boolean>;
  };
  base: {
    annotations: Record<string, string>;
    labels: Record<string, string>;
    containers: { name: string; cpuMillis: number; memoryBytes: number }[];
    podSpec: Record<string, unknown>;
  };
}

/** One dimension's bounds in base units, and as written in the policy (for messages). */
export interface DimensionBounds {
  max: number | undefined;
  min: number | undefined;
  ceiling: number | undefined;
  default: number | undefined;
  /** The policy's default request, below `default` (the default limit). */
  defaultRequest: number | undefined;
  maxRaw: string | undefined;
  minRaw: string | undefined;
  ceilingRaw: string | undefined;
  defaultRaw: string | undefined;
  defaultRequestRaw: string | undefined;
}

export type CompileResult =
  { ok: true; compiled: CompiledPolicy } | { ok: false; violations: FieldViolation[] };

const cache = new WeakMap<object, CompileResult>();
const textCache = new Map<string, CompileResult>();

/** Upper-case without the `CAP_` prefix: `cap_net_admin` and `NET_ADMIN` are the same capability. */
export const normCapability = (c: string): string => c.toUpperCase().replace(/^CAP_/, '');

function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (isObj(v)) for (const k in v) if (typeof v[k] === 'string') out[k] = v[k];
  return out;
}

function compileBase(base: Record<string, unknown> | undefined): CompiledPolicy['base'] {
  if (!base) return { annotations: {}, labels: {}, containers: [], podSpec: {} };
  const { metadata, annotations, labels, containers, ...podSpec } = base;
  const meta = isObj(metadata) ? metadata : {};
  const sidecars: CompiledPolicy['base']['containers'] = [];
  if (Array.isArray(containers)) {
    containers.forEach((c: unknown, i) => {
      if (!isObj(c)) return;
      const req = isObj(c.resources) && isObj(c.resources.requests) ? c.resources.requests : {};
      const cpu =
        typeof req.cpu === 'string' || typeof req.cpu === 'number' ? parseCpuMillis(req.cpu) : 0;
      const mem =
        typeof req.memory === 'string' || typeof req.memory === 'number'
          ? parseMemoryBytes(req.memory)
          : 0;
      sidecars.push({
        name: typeof c.name === 'string' ? c.name : `base-${i}`,
        cpuMillis: cpu ?? 0,
        memoryBytes: mem ?? 0,
      });
    });
  }
  return {
    // Pinned pod metadata may be written Kubernetes-style (`metadata.annotations`) or flat.
    annotations: { ...stringMap(annotations), ...stringMap(meta.annotations) },
    labels: { ...stringMap(labels), ...stringMap(meta.labels) },
    containers: sidecars,
    podSpec,
  };
}

/** Values shared by every resolution are frozen so no consumer can alter the compiled policy. */
function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}

/** Stores one answer in a bounded memo (cleared whole when full: O(1), safe under adversarial
 * input) and returns it. Callers look up with `memo.get` first and compute inline, so a hit
 * allocates no closure. */
export function memoStore(memo: Map<string, boolean>, key: string, v: boolean): boolean {
  if (memo.size >= 2048) memo.clear();
  memo.set(key, v);
  return v;
}

const NO_BOUNDS: DimensionBounds = Object.freeze({
  max: undefined,
  min: undefined,
  ceiling: undefined,
  default: undefined,
  maxRaw: undefined,
  minRaw: undefined,
  ceilingRaw: undefined,
  defaultRaw: undefined,
  defaultRequest: undefined,
  defaultRequestRaw: undefined,
});

function build(policy: Policy): CompiledPolicy {
  const c = policy.constraints ?? {};
  const r = c.resources ?? {};
  const q = (v: string | number | undefined, cpu: boolean): number | undefined =>
    v === undefined ? undefined : ((cpu ? parseCpuMillis(v) : parseMemoryBytes(v)) ?? undefined);
  const raw: Record<string, string> = {};
  for (const [k, v] of Object.entries(r)) {
    if (typeof v === 'string' || typeof v === 'number') raw[k] = String(v);
  }
  const n = c.network ?? {};
  // The policy validated, so these never add violations; the sink is discarded.
  const sink: FieldViolation[] = [];
  const s = c.security ?? {};
  const compiled: CompiledPolicy = {
    policy,
    requireLimits: r.requireLimits === true,
    bounds: { cpu: NO_BOUNDS, memory: NO_BOUNDS },
    raw,
    registries: c.image?.allowedRegistries ?? [],
    images: c.image?.allowedImages ?? [],
    allowedEgress: checkRules(n.allowedEgress, '', 'allowedEgress', sink),
    defaultEgress: checkRules(n.defaultEgress, '', 'defaultEgress', sink),
    denyHostnames: n.denyHttpsHostnameRules === true || n.denyDns === true,
    allowedIngress: checkRules(n.allowedIngress, '', 'allowedIngress', sink),
    defaultIngress: checkRules(n.defaultIngress, '', 'defaultIngress', sink),
    allowPrivileged: s.allowPrivileged === true,
    allowedCapabilities: new Set((s.allowedCapabilities ?? []).map(normCapability)),
    allowedSeccomp: s.allowedSeccompProfiles ?? [],
    allowedRuntimeClasses: s.allowedRuntimeClasses ?? [],
    instanceTypes: c.instance?.allowedInstanceTypes ?? [],
    defaultLifetime: c.lifecycle?.defaultLifetimeSeconds ?? 0,
    deniedPrefixes: c.metadata?.deniedAnnotationPrefixes ?? [],
    maxAnnotations: c.metadata?.maxAnnotationCount ?? 0,
    media: (c.volumes?.allowedMedia ?? []).map((m) =>
      m === 'STORAGE_MEDIUM_UNSPECIFIED' ? 'STORAGE_MEDIUM_DISK' : m,
    ),
    defaultEgressRules: [],
    defaultIngressRules: [],
    memo: {
      egress: new Map(),
      egressHosts: new Map(),
      ingress: new Map(),
      registries: new Map(),
      images: new Map(),
    },
    base: compileBase(policy.base),
  };
  compiled.defaultEgressRules = deepFreeze(compiled.defaultEgress.map((r) => r.rule));
  compiled.defaultIngressRules = deepFreeze(
    compiled.defaultIngress.map((r) => r.rule as IngressRule),
  );
  deepFreeze(compiled.base);
  const set = <K extends keyof CompiledPolicy>(k: K, v: CompiledPolicy[K] | undefined): void => {
    if (v !== undefined) compiled[k] = v;
  };
  set('maxCpu', q(r.maxCpu, true));
  set('minCpu', q(r.minCpu, true));
  set('defaultCpu', q(r.defaultCpu, true));
  set('defaultCpuRequest', q(r.defaultCpuRequest, true));
  set('cpuCeiling', q(r.cpuCeiling, true));
  set('maxMemory', q(r.maxMemory, false));
  set('minMemory', q(r.minMemory, false));
  set('defaultMemory', q(r.defaultMemory, false));
  set('defaultMemoryRequest', q(r.defaultMemoryRequest, false));
  set('memoryCeiling', q(r.memoryCeiling, false));
  set('maxGpuCount', r.maxGpuCount);
  set('maxVolumeBytes', q(c.volumes?.maxSize, false));
  const bounds = (dim: 'Cpu' | 'Memory'): DimensionBounds => ({
    max: compiled[`max${dim}`],
    min: compiled[`min${dim}`],
    ceiling: compiled[`${dim === 'Cpu' ? 'cpu' : 'memory'}Ceiling`],
    default: compiled[`default${dim}`],
    defaultRequest: compiled[`default${dim}Request`],
    maxRaw: raw[`max${dim}`],
    minRaw: raw[`min${dim}`],
    ceilingRaw: raw[`${dim === 'Cpu' ? 'cpu' : 'memory'}Ceiling`],
    defaultRaw: raw[`default${dim}`],
    defaultRequestRaw: raw[`default${dim}Request`],
  });
  compiled.bounds = { cpu: bounds('Cpu'), memory: bounds('Memory') };
  if (s.defaultCpuRuntimeClass) compiled.defaultCpuRuntimeClass = s.defaultCpuRuntimeClass;
  if (s.defaultGpuRuntimeClass) compiled.defaultGpuRuntimeClass = s.defaultGpuRuntimeClass;
  return compiled;
}

/**
 * Validates and compiles a policy (null = {@link DEFAULT_POLICY}); memoized per object. A policy
 * that fails validation yields its violations with paths prefixed by `policy.`.
 */
export function compilePolicy(policy: Policy | null): CompileResult {
  const key: unknown = policy ?? DEFAULT_POLICY;
  const cacheable = typeof key === 'object' && key !== null;
  const hit = cacheable ? cache.get(key) : undefined;
  if (hit) return hit;
  // Callers that re-read the policy (a new object per request) still avoid re-validation: a second,
  // bounded cache keyed by the policy's JSON text. Equal text means equal policy.
  let text: string | undefined;
  try {
    text = cacheable ? JSON.stringify(key) : undefined;
  } catch {
    text = undefined;
  }
  const byText = text === undefined ? undefined : textCache.get(text);
  if (byText) {
    if (cacheable) cache.set(key, byText);
    return byText;
  }
  const v = validatePolicy(key);
  const result: CompileResult = v.ok
    ? { ok: true, compiled: build(v.policy) }
    : {
        ok: false,
        violations: v.violations.map((x) => ({
          ...x,
          field: x.field === 'policy' ? 'policy' : `policy.${x.field}`,
          description: x.field === 'policy' ? x.description : `policy.${x.description}`,
        })),
      };
  // Policies are treated as immutable values: mutate a policy object and you must pass a new one.
  if (cacheable) cache.set(key, result);
  if (text !== undefined && text.length <= 64 * 1024) {
    if (textCache.size >= 256) textCache.clear();
    textCache.set(text, result);
  }
  return result;
}

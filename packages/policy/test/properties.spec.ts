import fc from 'fast-check';
import { stringify as toYaml } from 'yaml';
import type { Policy, ResolvedSandboxSpec } from '@paddock/contracts';
import { MAX_LIFETIME_SECONDS, ResolvedSandboxSpecSchema } from '@paddock/contracts';
import { parsePolicyDocument } from '../src/document';
import {
  DEFAULT_POLICY,
  parseCidr,
  parseCpuMillis,
  parseMemoryBytes,
  PLATFORM_DEFAULTS,
  resolveSandboxSpec,
  validatePolicy,
} from '../src/index';
import { clean, policyArb, reorderKeys, specArb } from './support/arbitraries';

const RUNS = Number(process.env.PADDOCK_PROPERTY_RUNS ?? 1500);
const SEED = 20261129;

/** A valid policy (the generator can combine bounds inconsistently; those are skipped). */
const validPolicyArb = policyArb.map(clean).filter((p) => validatePolicy(p).ok);

type Spec = ReturnType<typeof clean<Record<string, unknown>>>;
type SpecContainer = {
  image?: string;
  resources?: Record<string, unknown>;
  resourceRequirements?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
};

function validated(p: unknown): Policy {
  const v = validatePolicy(p);
  if (!v.ok) throw new Error('generator produced an invalid policy');
  return v.policy;
}

/** An address inside a parsed range, deterministically spread (independent containment check). */
function sample(lo: bigint, hi: bigint, k: number, n: number): bigint {
  return lo + ((hi - lo) * BigInt(k)) / BigInt(n);
}

/** Independent re-check of every constraint on an admitted resolved spec. */
function assertSatisfies(policy: Policy, r: ResolvedSandboxSpec): void {
  const res = policy.constraints?.resources ?? {};
  const q = (v: string | number | undefined, cpu: boolean): number | undefined =>
    v === undefined ? undefined : ((cpu ? parseCpuMillis(v) : parseMemoryBytes(v)) ?? undefined);
  const maxCpu = q(res.maxCpu, true);
  const minCpu = q(res.minCpu, true);
  const maxMem = q(res.maxMemory, false);
  const minMem = q(res.minMemory, false);
  let cpuSum = 0;
  let memSum = 0;
  for (const c of [...r.containers, ...r.initContainers]) {
    const { requests, limits } = c.resources;
    if (maxCpu !== undefined) {
      expect(Math.max(requests.cpuMillis, limits.cpuMillis)).toBeLessThanOrEqual(maxCpu);
    }
    if (minCpu !== undefined) expect(requests.cpuMillis).toBeGreaterThanOrEqual(minCpu);
    if (maxMem !== undefined) {
      expect(Math.max(requests.memoryBytes, limits.memoryBytes)).toBeLessThanOrEqual(maxMem);
    }
    if (minMem !== undefined) expect(requests.memoryBytes).toBeGreaterThanOrEqual(minMem);
    if (res.maxGpuCount !== undefined) {
      expect(requests.gpuCount).toBeLessThanOrEqual(Number(res.maxGpuCount));
    }
    expect(limits.cpuMillis).toBeGreaterThanOrEqual(requests.cpuMillis);
    cpuSum += requests.cpuMillis;
    memSum += requests.memoryBytes;
    const sec = policy.constraints?.security ?? {};
    if (c.securityContext.privileged) expect(sec.allowPrivileged).toBe(true);
    for (const cap of c.securityContext.capabilitiesAdd) {
      expect(sec.allowedCapabilities ?? []).toContain(cap);
    }
    const seccomp = sec.allowedSeccompProfiles?.length
      ? sec.allowedSeccompProfiles
      : ['RuntimeDefault'];
    expect(seccomp).toContain(c.securityContext.seccompProfile);
    const regs = policy.constraints?.image?.allowedRegistries ?? [];
    if (regs.length) {
      const full =
        c.image.includes('/') && c.image.split('/')[0]?.includes('.')
          ? c.image
          : `docker.io/library/${c.image}`;
      expect(regs.some((p) => full.startsWith(`${p}/`) || c.image.startsWith(`${p}/`))).toBe(true);
    }
  }
  const cpuCeil = q(res.cpuCeiling, true);
  const memCeil = q(res.memoryCeiling, false);
  const tmpfs = r.volumes
    .filter((v) => v.medium === 'STORAGE_MEDIUM_MEMORY')
    .reduce((a, v) => a + (v.sizeBytes ?? 0), 0);
  if (cpuCeil !== undefined) expect(cpuSum).toBeLessThanOrEqual(cpuCeil);
  if (memCeil !== undefined) expect(memSum + tmpfs).toBeLessThanOrEqual(memCeil);
  expect(r.lifetimeSeconds).toBeGreaterThan(0);
  expect(r.lifetimeSeconds).toBeLessThanOrEqual(MAX_LIFETIME_SECONDS);
  const rcs = policy.constraints?.security?.allowedRuntimeClasses ?? [];
  if (r.runtimeClassSource === 'pin') expect(rcs).toContain(r.runtimeClass);
  const types = policy.constraints?.instance?.allowedInstanceTypes ?? [];
  if (r.instanceType !== null && types.length) expect(types).toContain(r.instanceType);
  const meta = policy.constraints?.metadata ?? {};
  const own = Object.keys(r.annotations).filter(
    (k) =>
      !(k in ((policy.base?.metadata as { annotations?: object } | undefined)?.annotations ?? {})),
  );
  for (const k of own) {
    for (const p of meta.deniedAnnotationPrefixes ?? []) expect(k.startsWith(p)).toBe(false);
  }
  const media = policy.constraints?.volumes?.allowedMedia ?? [];
  const maxSize = q(policy.constraints?.volumes?.maxSize, false);
  for (const v of r.volumes) {
    if (media.length) expect(media).toContain(v.medium);
    if (maxSize !== undefined && v.sizeBytes !== null) {
      expect(v.sizeBytes).toBeLessThanOrEqual(maxSize);
    }
  }
  // Egress: every declared CIDR address sampled must be inside some allowed range minus its exceptions.
  const envelope = policy.constraints?.network?.allowedEgress ?? [];
  if (r.egress.source === 'spec' && envelope.length) {
    for (const rule of r.egress.rules) {
      if (!rule.cidr) continue;
      const d = parseCidr(rule.cidr.cidr);
      if (!d) throw new Error('unparseable admitted CIDR');
      for (let k = 0; k <= 8; k++) {
        const addr = sample(d.lo, d.hi, k, 8);
        const inside = envelope.some((e) => {
          if (e.any) return true;
          const a = e.cidr ? parseCidr(e.cidr.cidr) : null;
          if (!a || a.version !== d.version || addr < a.lo || addr > a.hi) return false;
          return !(e.cidr?.except ?? []).some((x) => {
            const ex = parseCidr(x);
            return ex !== null && addr >= ex.lo && addr <= ex.hi;
          });
        });
        expect(inside).toBe(true);
      }
    }
  }
}

/** The value of an explicitly requested cpu for container i, if any (the sources the engine reads). */
function requestedCpu(c: SpecContainer): string | undefined {
  return (c.resources?.cpu ??
    c.resourceRequirements?.requests?.cpu ??
    c.resourceRequirements?.limits?.cpu) as string | undefined;
}

describe('resolution properties (fast-check, fixed seed)', () => {
  it('never narrows: each resolved value equals the request or comes from a default', () => {
    fc.assert(
      fc.property(validPolicyArb, specArb.map(clean), (rawPolicy, spec: Spec) => {
        const policy = validated(rawPolicy);
        const r = resolveSandboxSpec({ policy, spec });
        if (!r.ok) return;
        const res = r.resolved;
        const containers = (spec.containers as SpecContainer[] | undefined) ?? [{}];
        containers.forEach((c, i) => {
          const out = res.containers[i];
          if (!out) throw new Error('container missing');
          const cpu = requestedCpu(c);
          if (cpu !== undefined) {
            expect(out.resourceSources.cpu).toBe('spec');
            const vals = [
              c.resources?.cpu,
              c.resourceRequirements?.requests?.cpu,
              c.resourceRequirements?.limits?.cpu,
            ]
              .filter((x) => x !== undefined)
              .map((x) => parseCpuMillis(x as string));
            expect(vals).toContain(out.resources.requests.cpuMillis);
          } else {
            const def = policy.constraints?.resources?.defaultCpu;
            expect(out.resources.requests.cpuMillis).toBe(
              def !== undefined ? parseCpuMillis(def) : PLATFORM_DEFAULTS.cpuMillis,
            );
          }
          expect(out.image).toBe(c.image ?? PLATFORM_DEFAULTS.image);
        });
        const lt = spec.maxLifetimeSeconds === undefined ? 0 : Number(spec.maxLifetimeSeconds);
        const pd = Number(policy.constraints?.lifecycle?.defaultLifetimeSeconds ?? 0);
        expect(res.lifetimeSeconds).toBe(lt > 0 ? lt : pd > 0 ? pd : 600);
        const net = spec.network as { egress?: unknown[]; denyEgress?: boolean } | undefined;
        if (net?.denyEgress) expect(res.egress.denyAll).toBe(true);
        if (net?.egress) expect(res.egress.rules).toEqual(net.egress);
        if (spec.runtimeClass !== undefined) expect(res.runtimeClass).toBe(spec.runtimeClass);
        if (spec.instanceType !== undefined) expect(res.instanceType).toBe(spec.instanceType);
        for (const [k, v] of Object.entries(
          (spec.annotations as Record<string, string> | undefined) ?? {},
        )) {
          if (k !== 'pinned' || !policy.base) expect(res.annotations[k]).toBe(v);
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('admitted specs satisfy every constraint (independent re-check) and match the resolved schema', () => {
    let admitted = 0;
    fc.assert(
      fc.property(validPolicyArb, specArb.map(clean), (rawPolicy, spec) => {
        const policy = validated(rawPolicy);
        const r = resolveSandboxSpec({ policy, spec });
        if (!r.ok) {
          for (const v of r.violations) expect(v.field.length * v.rule.length).toBeGreaterThan(0);
          return;
        }
        admitted++;
        assertSatisfies(policy, r.resolved);
        expect(ResolvedSandboxSpecSchema.safeParse(r.resolved).success).toBe(true);
      }),
      { seed: SEED + 1, numRuns: RUNS },
    );
    // The generators must exercise the admitted branch, not only rejections.
    expect(admitted).toBeGreaterThan(RUNS / 20);
  });

  it('the platform default policy (policy: null) is the documented DEFAULT_POLICY', () => {
    fc.assert(
      fc.property(specArb.map(clean), (spec) => {
        expect(resolveSandboxSpec({ policy: null, spec })).toEqual(
          resolveSandboxSpec({ policy: DEFAULT_POLICY, spec }),
        );
      }),
      { seed: SEED + 2, numRuns: Math.min(RUNS, 500) },
    );
  });

  it('the decision does not depend on key order', () => {
    fc.assert(
      fc.property(validPolicyArb, specArb.map(clean), (rawPolicy, spec) => {
        const a = resolveSandboxSpec({ policy: validated(rawPolicy), spec });
        const b = resolveSandboxSpec({
          policy: validated(reorderKeys(rawPolicy)),
          spec: reorderKeys(spec),
        });
        expect(b).toEqual(a);
        expect(validatePolicy(reorderKeys(rawPolicy))).toEqual(validatePolicy(rawPolicy));
      }),
      { seed: SEED + 3, numRuns: RUNS },
    );
  });

  it('YAML and JSON inputs give identical results', () => {
    fc.assert(
      fc.property(validPolicyArb, specArb.map(clean), (rawPolicy, spec) => {
        const pj = parsePolicyDocument(JSON.stringify(rawPolicy));
        const py = parsePolicyDocument(toYaml(rawPolicy));
        const sj = parsePolicyDocument(JSON.stringify(spec));
        const sy = parsePolicyDocument(toYaml(spec));
        expect(py).toEqual(pj);
        expect(sy).toEqual(sj);
        if (!pj.ok || !sj.ok) throw new Error('valid documents must parse');
        const pv = validatePolicy(pj.value);
        if (!pv.ok) throw new Error('policy must stay valid through JSON');
        const viaJson = resolveSandboxSpec({ policy: pv.policy, spec: sj.value });
        expect(viaJson).toEqual(resolveSandboxSpec({ policy: validated(rawPolicy), spec }));
      }),
      { seed: SEED + 4, numRuns: Math.min(RUNS, 500) },
    );
  });
});

import type { FieldViolation, Policy, RunnerCapabilities, RunnerCapacity, SandboxSpec } from '@paddock/contracts';
import { explainPlacement, warmPoolKey } from '@paddock/policy';
import type { PlacementVerdictRow } from '../db/database';

export interface PlacementCandidate {
  runnerId: string;
  health: 'HEALTHY' | 'DEGRADED' | 'UNHEALTHY';
  capabilities: RunnerCapabilities;
  capacity: RunnerCapacity;
  /** null = the gateway could not learn the runner's policy; the runner's own resolution decides. */
  policy: Policy | null;
  /** Sandboxes this gateway placed there since the runner's last heartbeat (spreads bursts). */
  placedSinceHeartbeat: number;
  /** `warmPoolKey`s of the runner's pools with a warm sandbox ready (from its heartbeat). */
  readyWarmKeys?: readonly string[];
}

export interface PlacementPlan {
  /** Runner ids considered (after `runnerIds` narrowing). */
  candidates: string[];
  verdicts: PlacementVerdictRow[];
  /** Runners to try, best first: admitted ones by free capacity, then the policy-unknown ones. */
  order: string[];
}

const toViolation = (v: FieldViolation): PlacementVerdictRow['violations'][number] => ({
  field: v.field,
  rule: v.rule,
  description: v.description,
});

/**
 * Decides where a sandbox may go. Pure: the caller supplies the candidates it learned from
 * heartbeats, and the requester's address (`caller.sourceIp`), which each runner policy's
 * `controlPlaneAccess.sourceIpAllowlist` must allow. A runner whose policy admits the spec is
 * preferred when it has a warm sandbox ready for the spec (a take skips creation altogether),
 * then by free sandbox slots, then CPU, then memory; ties keep a stable order by runner id.
 */
export function planPlacement(
  spec: SandboxSpec,
  all: PlacementCandidate[],
  runnerIds?: readonly string[],
  caller: { sourceIp?: string } = {},
  /** How each runner's policy judges the spec; a caller may memoize it (PlacementService). */
  explain: typeof explainPlacement = explainPlacement,
): PlacementPlan {
  const wanted = runnerIds && runnerIds.length ? new Set(runnerIds) : null;
  const candidates = all.filter((c) => !wanted || wanted.has(c.runnerId)).sort((a, b) => a.runnerId.localeCompare(b.runnerId));
  const known = candidates.filter((c): c is PlacementCandidate & { policy: Policy } => c.policy !== null);
  const explained = known.length
    ? explain(
        spec,
        known.map((c) => ({ runnerId: c.runnerId, policy: c.policy, capabilities: c.capabilities })),
        caller,
      )
    : [];
  const byId = new Map(explained.map((e) => [e.runnerId, e]));
  const verdicts: PlacementVerdictRow[] = candidates.map((c) => {
    const e = byId.get(c.runnerId);
    if (!e) return { runnerId: c.runnerId, admitted: null, violations: [], note: 'policy-unknown' };
    return { runnerId: c.runnerId, admitted: e.admitted, violations: e.violations.map(toViolation) };
  });
  const warmReady = (c: PlacementCandidate): boolean => {
    const resolved = byId.get(c.runnerId)?.resolved;
    return resolved !== undefined && (c.readyWarmKeys?.length ?? 0) > 0 && (c.readyWarmKeys ?? []).includes(warmKeyOf(resolved));
  };
  const score = (c: PlacementCandidate): [number, number, number, number, number] => [
    c.health === 'HEALTHY' ? 1 : 0,
    warmReady(c) ? 1 : 0,
    Math.max(0, c.capacity.sandboxesMax - c.capacity.sandboxesRunning - c.placedSinceHeartbeat),
    c.capacity.cpuMillisFree,
    c.capacity.memoryBytesFree,
  ];
  const better = (a: PlacementCandidate, b: PlacementCandidate): number => {
    const sa = score(a);
    const sb = score(b);
    for (let i = 0; i < sa.length; i++) {
      const d = (sb[i] as number) - (sa[i] as number);
      if (d !== 0) return d;
    }
    return a.runnerId.localeCompare(b.runnerId);
  };
  const admitted = candidates.filter((c) => byId.get(c.runnerId)?.admitted === true).sort(better);
  const unknown = candidates.filter((c) => c.policy === null).sort(better);
  return { candidates: candidates.map((c) => c.runnerId), verdicts, order: [...admitted, ...unknown].map((c) => c.runnerId) };
}

/** A resolution's warm-pool key, once per resolution (a memoized verdict's is asked at every create). */
const warmKeys = new WeakMap<object, string>();
function warmKeyOf(resolved: Parameters<typeof warmPoolKey>[0]): string {
  let k = warmKeys.get(resolved);
  if (k === undefined) warmKeys.set(resolved, (k = warmPoolKey(resolved)));
  return k;
}

/** Flattens per-runner refusals into field violations whose `field` names the runner too. */
export function violationsByRunner(verdicts: PlacementVerdictRow[]): FieldViolation[] {
  return verdicts
    .filter((v) => v.admitted === false)
    .flatMap((v) =>
      v.violations.map((x) => ({
        field: x.field,
        rule: x.rule,
        description: `runner ${v.runnerId}: ${x.description}`,
        constraint: v.runnerId,
      })),
    );
}

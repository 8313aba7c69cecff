import type { RunnerHeartbeat, SandboxSpec } from '@paddock/contracts';
import { explainPlacement } from '@paddock/policy';
import type { PolicySource } from '../runners/policy-source';
import type { RunnerRegistry } from '../runners/runner-registry';
import { planPlacement, type PlacementCandidate, type PlacementPlan } from './placement';

/** Builds placement plans from live heartbeats and the runners' policies. */
export class PlacementService {
  /** Sandboxes placed per runner since its last heartbeat, keyed by that heartbeat's sequence. */
  private readonly placed = new Map<string, { sequence: number; count: number }>();

  constructor(
    private readonly registry: RunnerRegistry,
    private readonly policies: PolicySource,
  ) {}

  /**
   * `specKey`: a digest of the spec (the create's fingerprint); with it, each runner's verdict on
   * the spec is remembered while the runner's policy and capabilities stay the same.
   */
  async plan(organizationId: string, spec: SandboxSpec, caller: { sourceIp?: string } = {}, specKey?: string): Promise<PlacementPlan> {
    const known = this.registry.candidates(organizationId);
    const candidates: PlacementCandidate[] = await Promise.all(
      known.map(async ({ heartbeat: hb }) => ({
        runnerId: hb.runnerId,
        health: hb.health,
        capabilities: hb.capabilities,
        capacity: hb.capacity,
        policy: await this.policies.policyOf(hb),
        placedSinceHeartbeat: this.placedSince(hb.runnerId, hb.sequence),
        readyWarmKeys: (hb.warmPoolStatus ?? []).filter((p) => p.ready > 0 && p.key !== undefined).map((p) => p.key as string),
      })),
    );
    if (specKey === undefined) return planPlacement(spec, candidates, spec.runnerIds, caller);
    const explain: typeof explainPlacement = (s, runners, c) =>
      runners.map((r) => this.verdicts.get(r.runnerId, r.policy, this.registry.get(r.runnerId)?.heartbeat, `${specKey}\u0000${c?.sourceIp ?? ''}`, () => explainPlacement(s, [r], c)));
    return planPlacement(spec, candidates, spec.runnerIds, caller, explain);
  }

  private readonly verdicts = new VerdictMemo();

  runnerGroupOf(runnerId: string): string {
    return this.registry.get(runnerId)?.heartbeat.runnerGroupId ?? 'default';
  }

  notePlaced(runnerId: string): void {
    const hb = this.registry.get(runnerId)?.heartbeat;
    if (!hb) return;
    const cur = this.placed.get(runnerId);
    this.placed.set(runnerId, cur && cur.sequence === hb.sequence ? { sequence: hb.sequence, count: cur.count + 1 } : { sequence: hb.sequence, count: 1 });
  }

  private placedSince(runnerId: string, sequence: number): number {
    const cur = this.placed.get(runnerId);
    return cur && cur.sequence === sequence ? cur.count : 0;
  }
}

type Verdict = ReturnType<typeof explainPlacement>[number];

/** Most verdicts remembered per runner (distinct specs × caller addresses) before starting over. */
const MAX_VERDICTS = 1_000;

/**
 * Verdicts of a runner's policy on specs, valid while that runner's policy (the same object: the
 * PolicySource caches one per etag) and capabilities (compared as JSON, once per heartbeat) stay
 * the same. Resolving a spec against a policy is pure, so a remembered verdict is the verdict.
 */
class VerdictMemo {
  private readonly byRunner = new Map<string, { policy: unknown; heartbeat: RunnerHeartbeat; capabilities: string; verdicts: Map<string, Verdict> }>();

  get(runnerId: string, policy: unknown, heartbeat: RunnerHeartbeat | undefined, key: string, explain: () => Verdict[]): Verdict {
    const fresh = (): Verdict => explain()[0] as Verdict;
    if (!heartbeat) return fresh();
    let m = this.byRunner.get(runnerId);
    if (m && m.heartbeat !== heartbeat) {
      const capabilities = JSON.stringify(heartbeat.capabilities);
      m = m.policy === policy && m.capabilities === capabilities ? { ...m, heartbeat } : undefined;
    }
    if (!m || m.policy !== policy) {
      m = { policy, heartbeat, capabilities: JSON.stringify(heartbeat.capabilities), verdicts: new Map() };
    }
    this.byRunner.set(runnerId, m);
    let v = m.verdicts.get(key);
    if (!v) {
      if (m.verdicts.size >= MAX_VERDICTS) m.verdicts.clear();
      v = fresh();
      m.verdicts.set(key, v);
    }
    return v;
  }
}

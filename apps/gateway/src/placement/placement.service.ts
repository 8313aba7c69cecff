import type { SandboxSpec } from '@paddock/contracts';
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

  async plan(organizationId: string, spec: SandboxSpec, caller: { sourceIp?: string } = {}): Promise<PlacementPlan> {
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
    return planPlacement(spec, candidates, spec.runnerIds, caller);
  }

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

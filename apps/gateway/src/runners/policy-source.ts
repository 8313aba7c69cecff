import type { Kysely } from 'kysely';
import { CP_RUNNER_POLICIES_V1, PolicySchema, type Policy, type RunnerHeartbeat } from '@paddock/contracts';
import { DEFAULT_POLICY } from '@paddock/policy';
import type { GatewayDatabase } from '../db/database';

/**
 * Where placement learns a runner's policy. Heartbeats carry only the policy's etag, and the
 * runner RPC has no op that returns the document, so the gateway reads the control plane's
 * published view `cp_runner_policies_v1` (its only access to runner rows), and trusts a policy
 * only when its etag equals the one the runner says it applies. The database is
 * there even when the control-plane process is down. Anything else is "policy unknown": the
 * gateway still tries that runner and lets the runner's own resolution decide.
 *
 * Cached per (runner, etag): a policy under one etag never changes.
 */
export class PolicySource {
  private readonly cache = new Map<string, Policy | null>();
  /** Until when to skip the read model after finding it absent (it may be migrated later). */
  private skipReadModelUntil = 0;

  constructor(private readonly db: Kysely<GatewayDatabase>) {}

  /** The policy the runner applies, or null when it cannot be known. */
  async policyOf(hb: RunnerHeartbeat): Promise<Policy | null> {
    if (hb.usingDefaultPolicy) return DEFAULT_POLICY;
    if (hb.policyEtag === null) return null;
    const key = `${hb.runnerId}\u0000${hb.policyEtag}`;
    if (this.cache.has(key)) return this.cache.get(key) ?? null;
    const policy = await this.fetch(hb);
    // Only a definite answer is cached; an etag the read model does not show yet may appear later.
    if (policy) this.cache.set(key, policy);
    return policy;
  }

  private async fetch(hb: RunnerHeartbeat): Promise<Policy | null> {
    if (Date.now() < this.skipReadModelUntil) return null;
    try {
      const found = await this.db
        .selectFrom('cp_runner_policies_v1')
        .selectAll()
        .where('runner_id', '=', hb.runnerId)
        .where('organization_id', '=', hb.organizationId)
        .executeTakeFirst();
      if (!found) return null;
      const row = CP_RUNNER_POLICIES_V1.row.parse(found);
      if (row.policy_etag !== hb.policyEtag) return null;
      if (row.policy === null) return DEFAULT_POLICY;
      const parsed = PolicySchema.safeParse(row.policy);
      return parsed.success ? parsed.data : null;
    } catch (e) {
      // 42P01: the control plane's view is not in this database (gateway deployed alone).
      if ((e as { code?: string }).code === '42P01') this.skipReadModelUntil = Date.now() + 30_000;
      return null;
    }
  }
}

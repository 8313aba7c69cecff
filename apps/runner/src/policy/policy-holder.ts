import type { FieldViolation, Policy, ResolvedSandboxSpec, RunnerCapabilities } from '@paddock/contracts';
import { DEFAULT_POLICY, resolveSandboxSpec, validatePolicy } from '@paddock/policy';

/** The policy in force now. A new one applies to sandboxes created afterwards only. */
export interface ActivePolicy {
  policy: Policy;
  etag: string | null;
  usingDefault: boolean;
}

/**
 * Holds the runner's current policy. Running sandboxes never consult it again: their spec was
 * resolved once at launch and the result travels with them (and with their persisted labels).
 */
export class PolicyHolder {
  private active: ActivePolicy = { policy: DEFAULT_POLICY, etag: null, usingDefault: true };

  current(): ActivePolicy {
    return this.active;
  }

  /** `undefined` policy = back to the platform default (e.g. the controller removed it). */
  set(policy: Policy | undefined, etag: string | undefined): void {
    this.active = policy
      ? { policy, etag: etag ?? null, usingDefault: false }
      : { policy: DEFAULT_POLICY, etag: null, usingDefault: true };
  }

  /**
   * Validates a policy document (as the control plane and the gateway do) and applies it.
   * `null`/`undefined` = the platform default. An invalid document changes nothing.
   */
  apply(doc: unknown, etag: string | undefined): { ok: true } | { ok: false; violations: FieldViolation[] } {
    if (doc === undefined || doc === null) {
      this.set(undefined, undefined);
      return { ok: true };
    }
    const v = validatePolicy(doc);
    if (!v.ok) return { ok: false, violations: v.violations };
    this.set(v.policy, etag);
    return { ok: true };
  }

  /** Resolves a raw request spec: the policy engine checks its structure and names every violation. */
  resolve(
    spec: unknown,
    capabilities: RunnerCapabilities,
  ): { ok: true; resolved: ResolvedSandboxSpec; policy: ActivePolicy } | { ok: false; violations: FieldViolation[] } {
    const active = this.active;
    const r = resolveSandboxSpec({ policy: active.policy, spec, capabilities });
    return r.ok ? { ok: true, resolved: r.resolved, policy: active } : { ok: false, violations: r.violations };
  }
}

import { PaddockError } from '@paddock/contracts';
import { checkSourceAccess } from '@paddock/policy';
import type { Principal } from '../auth/token-authenticator';
import type { PolicySource } from './policy-source';
import type { RunnerRegistry } from './runner-registry';

/**
 * `controlPlaneAccess.sourceIpAllowlist` before each operation on an existing sandbox: the
 * caller's address must be allowed by the policy of the runner that owns it. Runner
 * selection applies the same rule through `explainPlacement`, so a create never lands where the
 * caller could not then use the sandbox.
 *
 * The policy is the one the runner reports applying (its heartbeat's etag, see PolicySource). A
 * runner this gateway has no heartbeat from, or whose policy it cannot read, is not checked: its
 * sandboxes cannot be reached through the runner anyway, and the rows stay readable.
 */
export class SourceGate {
  constructor(
    private readonly registry: RunnerRegistry,
    private readonly policies: PolicySource,
  ) {}

  async check(principal: Principal, runnerId: string): Promise<void> {
    if (principal.sourceIp === undefined) return;
    const hb = this.registry.get(runnerId)?.heartbeat;
    if (!hb) return;
    const violation = checkSourceAccess(await this.policies.policyOf(hb), principal.sourceIp);
    if (!violation) return;
    throw new PaddockError('permission_denied', `${violation.description}; its sandboxes cannot be used from this address`, {
      reason: 'PADDOCK_SOURCE_IP_NOT_ALLOWED',
      violations: [violation],
    });
  }
}

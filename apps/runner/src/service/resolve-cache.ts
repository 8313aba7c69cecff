import type { ResolvedSandboxSpec, RunnerCapabilities, SandboxSpec } from '@paddock/contracts';
import type { ActivePolicy } from '../policy/policy-holder';

/** An admitted spec: what the policy resolved it to, and its typed form. Shared: never mutated. */
export interface AdmittedSpec {
  resolved: ResolvedSandboxSpec;
  spec: SandboxSpec;
}

/** A burst sends a few distinct specs; a longer list would only keep unique ones alive for the GC to trace. */
const MAX_ENTRIES = 64;

/**
 * Admitted specs by their canonical JSON, for the policy and capabilities they were resolved
 * under. Resolving and parsing a spec is most of the runner's CPU for a create, and a burst of
 * creates (an agent fleet taking a warm pool) usually sends one spec many times. Resolution is
 * a pure function of the spec, the policy and the capabilities, so an entry is dropped with the
 * whole cache when either of the other two changes; only admitted specs are kept (a refused one
 * is answered again by the policy engine, naming its violations).
 */
export class ResolveCache {
  private readonly entries = new Map<string, AdmittedSpec>();
  private policy: ActivePolicy | undefined;
  private capabilities = '';

  get(specJson: string, policy: ActivePolicy, capabilities: RunnerCapabilities): AdmittedSpec | undefined {
    const caps = JSON.stringify(capabilities);
    if (policy !== this.policy || caps !== this.capabilities) {
      this.entries.clear();
      this.policy = policy;
      this.capabilities = caps;
      return undefined;
    }
    return this.entries.get(specJson);
  }

  /** After a `get` under the same policy and capabilities. */
  set(specJson: string, admitted: AdmittedSpec): void {
    if (this.entries.size >= MAX_ENTRIES) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(specJson, admitted);
  }
}

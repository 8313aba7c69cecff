import type { FieldViolation, Policy, ResolvedSandboxSpec, RunnerCapabilities, SandboxSpec } from '@paddock/contracts';
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
export declare class PolicyHolder {
    private active;
    current(): ActivePolicy;
    /** `undefined` policy = back to the platform default (e.g. the controller removed it). */
    set(policy: Policy | undefined, etag: string | undefined): void;
    resolve(spec: SandboxSpec, capabilities: RunnerCapabilities): {
        ok: true;
        resolved: ResolvedSandboxSpec;
        policy: ActivePolicy;
    } | {
        ok: false;
        violations: FieldViolation[];
    };
}

import { type Sandbox, type SandboxEffectiveFields, type SandboxSpec, type SandboxState, type SandboxStateReason } from '@paddock/contracts';
/**
 * What the runner knows of one sandbox it owns. Pure data plus pure transitions.
 *
 * Invariants:
 * - state only moves forward: PENDING → CREATING → RUNNING → TERMINATING → COMPLETED | FAILED
 *   (steps may be skipped, e.g. CREATING → FAILED or RUNNING → COMPLETED); a late or duplicate
 *   backend event that would move it backwards or out of a terminal state is ignored;
 * - a terminal record always has a `stateReason` and an `endTime`;
 * - `sequence` grows with every accepted transition, across runner restarts too (clock-derived).
 */
export interface SandboxRecord {
    sandboxId: string;
    organizationId: string;
    spec: SandboxSpec;
    labels: Record<string, string>;
    effective: SandboxEffectiveFields;
    /** Canonical JSON of what the create asked for: a redelivered create must match it exactly. */
    requestFingerprint: string;
    state: SandboxState;
    stateReason?: SandboxStateReason;
    message?: string;
    exitCode?: number;
    createTime: Date;
    startTime?: Date;
    endTime?: Date;
    sequence: number;
    /** Reserved capacity, released when the sandbox reaches a terminal state. */
    allocation: {
        cpuMillis: number;
        memoryBytes: number;
    };
    /** Hard deadline from the lifetime resolved at launch. */
    deadline: Date;
}
export interface StateChange {
    state: SandboxState;
    reason?: SandboxStateReason;
    message?: string;
    exitCode?: number;
    at: Date;
}
/** Next event sequence: microseconds of the clock, or one past the previous if the clock lags. */
export declare function nextSequence(previous: number, now: Date): number;
/**
 * Applies a state change. Returns the new record, or `undefined` when the change is stale (not
 * forward) and must be ignored. Staying in TERMINATING or another non-terminal state is a no-op.
 */
export declare function applyStateChange(rec: SandboxRecord, change: StateChange): SandboxRecord | undefined;
/** Whether a record still holds capacity on the runner. */
export declare function holdsCapacity(rec: SandboxRecord): boolean;
/** The resource as the gateway and SDK show it. */
export declare function toSandbox(rec: SandboxRecord, runner: {
    runnerId: string;
    runnerGroupId: string;
}): Sandbox;
/** Deterministic JSON (sorted keys) so two equal requests fingerprint the same. */
export declare function canonicalJson(value: unknown): string;

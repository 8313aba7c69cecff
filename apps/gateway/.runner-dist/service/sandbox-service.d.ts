import { type DeleteSandboxResponse, type ExecResponse, type RunnerCapacity, type Sandbox, type SandboxStateEvent, type SandboxStateReason } from '@paddock/contracts';
import type { SandboxBackend } from '../backend/sandbox-backend';
import type { PolicyHolder } from '../policy/policy-holder';
import { type SandboxHostCaps } from './launch-spec';
import { type SandboxRecord } from './sandbox-record';
export interface RunnerIdentity {
    runnerId: string;
    organizationId: string;
    clusterId: string;
    zone: string;
    runnerGroupId: string;
}
export interface RunnerCapacityLimits {
    cpuMillis: number;
    memoryBytes: number;
    sandboxes: number;
}
export interface Clock {
    now(): Date;
}
export interface RunnerLogger {
    info(msg: string, fields?: Record<string, unknown>): void;
    warn(msg: string, fields?: Record<string, unknown>): void;
    error(msg: string, fields?: Record<string, unknown>): void;
}
export interface SandboxServiceDeps {
    backend: SandboxBackend;
    identity: RunnerIdentity;
    policy: PolicyHolder;
    capacity: RunnerCapacityLimits;
    caps: SandboxHostCaps;
    publishState: (evt: SandboxStateEvent) => void;
    clock: Clock;
    log: RunnerLogger;
}
/** What `recover()` did with each sandbox found running at startup. */
export interface RecoveryReport {
    adopted: string[];
    reaped: {
        sandboxId: string;
        reason: SandboxStateReason;
    }[];
}
/**
 * The runner's sandbox bookkeeping: admission (policy, capacity, idempotency), the lifecycle
 * registry fed by backend events, lifetime enforcement, and the unary operations. Transport-free:
 * the NATS layer calls it with decoded bodies and turns thrown PaddockErrors into error replies.
 */
export declare class SandboxService {
    private readonly records;
    private readonly lifetimeTimers;
    private readonly d;
    constructor(deps: SandboxServiceDeps);
    /**
     * Admits and launches a sandbox, replying before it runs (seed 002). Idempotent by sandboxId: a
     * redelivered create returns the existing sandbox; the same id with another spec is refused.
     */
    create(body: unknown): Promise<Sandbox>;
    get(body: unknown): Sandbox;
    list(body: unknown): Sandbox[];
    /** Stops a sandbox: replies with it in STATE_TERMINATING; the terminal state follows as an event. */
    delete(body: unknown): DeleteSandboxResponse;
    exec(body: unknown): Promise<ExecResponse>;
    /** Throws unless the sandbox exists for this organization and is RUNNING (exec, files, streams). */
    requireRunning(organizationId: string, sandboxId: string): SandboxRecord;
    /** Throws unless the sandbox exists for this organization (logs work in any state). */
    find(organizationId: string, sandboxId: string): SandboxRecord;
    /**
     * Accounts for every sandbox the backend still runs after a runner restart. A sandbox whose
     * metadata is readable, that belongs to this runner and organization and whose deadline has not
     * passed is adopted with the spec resolved at its launch; anything else is reaped and reported
     * terminal with a reason. Nothing is left unaccounted for.
     */
    recover(): Promise<RecoveryReport>;
    private judgeRecovered;
    private adopt;
    private recordReaped;
    capacity(): RunnerCapacity;
    private checkCapacity;
    /** Clears timers. Sandboxes keep running: the next runner process adopts them. */
    close(): void;
    private onBackendEvent;
    private transition;
    private stop;
    /** The runner's own lifetime timer, in addition to the backend's backstop. */
    private armLifetime;
    private disarmLifetime;
    private emit;
    private mustGet;
    private view;
}

import { type NatsConnection } from '@nats-io/transport-node';
import type { SandboxBackend } from './backend/sandbox-backend';
import { PolicyHolder } from './policy/policy-holder';
import type { SandboxHostCaps } from './service/launch-spec';
import { SandboxService, type Clock, type RecoveryReport, type RunnerCapacityLimits, type RunnerIdentity, type RunnerLogger } from './service/sandbox-service';
export interface RunnerOptions {
    natsUrl: string;
    backend: SandboxBackend;
    /** Identity from the environment; fields left out come from the config file's `identity`. */
    identity: Partial<RunnerIdentity>;
    configPath?: string;
    heartbeatIntervalMs: number;
    capacity: RunnerCapacityLimits;
    caps: SandboxHostCaps;
    streamIdleTimeoutMs: number;
    clock?: Clock;
    log?: RunnerLogger;
    /** Period of the config file's stat fallback. */
    configPollMs?: number;
}
export interface RunningRunner {
    readonly identity: RunnerIdentity;
    readonly instanceId: string;
    readonly nc: NatsConnection;
    readonly service: SandboxService;
    readonly policy: PolicyHolder;
    readonly recovery: RecoveryReport;
    /** Resolves once every config-file change seen so far has been applied. */
    configSettled(): Promise<void>;
    /**
     * Graceful stop: stop taking requests, stop heartbeats, drain NATS. Sandboxes keep running (the
     * next runner process adopts them); the backend is closed too unless `keepBackend`.
     */
    stop(opts?: {
        keepBackend?: boolean;
    }): Promise<void>;
}
export declare const consoleLogger: RunnerLogger;
/**
 * Starts a runner: config → NATS → adopt or reap what the backend still runs → serve RPCs →
 * heartbeats. Recovery comes before serving so no request sees a half-known registry.
 */
export declare function startRunner(opts: RunnerOptions): Promise<RunningRunner>;

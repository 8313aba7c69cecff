import type { NatsConnection } from '@nats-io/transport-node';
import type { SandboxBackend } from '../backend/sandbox-backend';
import type { RunnerLogger, SandboxService } from '../service/sandbox-service';
import type { StreamHandlers } from './stream-handlers';
/**
 * Serves the runner's RPC subjects with plain core-NATS request/reply in the runner's queue group.
 *
 * Why not `@nats-io/services`: on the pinned 3.3.1 line it only exists as a prerelease
 * (3.0.0-25, TOOLCHAIN.md §1), and all it would add here is `$SRV` discovery and stats. The
 * envelope (`{ ok, result } | { ok: false, error: ApiErrorBody }`) and the subject scheme live in
 * `@paddock/contracts`, so moving to the services framework later changes only this file.
 */
export declare class RunnerRpcServer {
    private readonly nc;
    private readonly runnerId;
    private readonly log;
    private sub;
    private readonly handlers;
    private inFlight;
    constructor(nc: NatsConnection, runnerId: string, service: SandboxService, backend: SandboxBackend, streams: StreamHandlers, log: RunnerLogger);
    start(): void;
    /** Stops taking new requests and waits (bounded) for the in-flight ones to reply. */
    stop(timeoutMs?: number): Promise<void>;
    private handle;
}

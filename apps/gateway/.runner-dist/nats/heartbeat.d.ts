import { type RunnerHeartbeat } from '@paddock/contracts';
import type { NatsConnection } from '@nats-io/transport-node';
/**
 * Publishes the runner's heartbeat every `intervalMs`, and once at start so observers learn
 * about a (re)started runner without waiting a full period.
 */
export declare class HeartbeatPublisher {
    private readonly nc;
    private readonly runnerId;
    private readonly intervalMs;
    private readonly build;
    private timer;
    private sequence;
    constructor(nc: NatsConnection, runnerId: string, intervalMs: number, build: (sequence: number, sentAt: Date) => RunnerHeartbeat);
    start(): void;
    stop(): void;
    /** Publishes one heartbeat now (also used after a policy change, so the new etag shows at once). */
    beat(): void;
}

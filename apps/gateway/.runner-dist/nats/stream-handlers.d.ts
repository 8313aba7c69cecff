import { type ReadFileResponse, type StreamOpenedResponse, type WriteFileResponse } from '@paddock/contracts';
import type { NatsConnection } from '@nats-io/transport-node';
import type { SandboxBackend } from '../backend/sandbox-backend';
import type { RunnerLogger, SandboxService } from '../service/sandbox-service';
export interface StreamHandlerDeps {
    nc: NatsConnection;
    runnerId: string;
    service: SandboxService;
    backend: SandboxBackend;
    idleTimeoutMs: number;
    log: RunnerLogger;
}
/**
 * The streaming ops. Each handler validates, opens the runner's end of the stream (subscribed
 * before the reply goes out, so no caller frame can be missed), replies at once, and keeps
 * pumping frames in the background until `exit`/`eof`/`error`.
 */
export declare class StreamHandlers {
    private readonly d;
    constructor(d: StreamHandlerDeps);
    private open;
    private fail;
    execStream(body: unknown): Promise<StreamOpenedResponse>;
    logs(body: unknown): Promise<StreamOpenedResponse>;
    readFile(body: unknown): Promise<ReadFileResponse>;
    writeFile(body: unknown): Promise<WriteFileResponse>;
}

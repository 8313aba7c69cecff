import { type StreamFrame, type StreamFrameHeaderInput } from '@paddock/contracts';
import type { NatsConnection } from '@nats-io/transport-node';
export interface StreamEndpointOptions {
    /** Subject this end publishes its frames on. */
    sendSubject: string;
    /** Subject this end receives the peer's frames on. */
    recvSubject: string;
    /** Credited frames the peer lets this end send before its first `credit` frame. */
    initialSendGrant: number;
    /** Credited frames this end accepts before it grants more. */
    recvWindow: number;
    /** Give up when the peer grants nothing (while this end waits to send) for this long. */
    idleTimeoutMs: number;
}
/**
 * One end of a flow-controlled stream over two NATS subjects (the protocol of
 * `@paddock/contracts` runner-rpc: binary frames, cumulative credit grants).
 *
 * Sending: `sendCredited` resolves once the frame is published, which happens only when the
 * peer's grant allows it. A producer that awaits it (a `for await` over a child's stdout) stops
 * pulling, the pipe fills and the process blocks: memory stays bounded end to end. Frames are
 * published strictly in call order.
 *
 * Receiving: every frame goes to `onFrame`. For a credited frame the handler calls
 * `consumed(seq)` once the payload has been handed on (e.g. written to the process's stdin);
 * only then does this end grant more.
 */
export declare class StreamEndpoint {
    private readonly nc;
    private readonly opts;
    onFrame: (frame: StreamFrame) => void;
    /** Called once when the stream fails (bad frame from the peer, credit timeout) or closes. */
    onClose: (err?: Error) => void;
    private readonly send;
    private readonly recv;
    private readonly queue;
    private readonly sub;
    private closed;
    constructor(nc: NatsConnection, opts: StreamEndpointOptions);
    get isClosed(): boolean;
    /** Sends a payload-carrying frame (stdout/stderr/stdin/data) once credit allows. */
    sendCredited(header: StreamFrameHeaderInput, payload: Uint8Array): Promise<void>;
    /** Sends a control frame (never held back by the window). */
    sendControl(header: StreamFrameHeaderInput): void;
    /** Marks an inbound credited frame as handed on; grants more credit when half the window is used. */
    consumed(seq: number): void;
    /** Applies a grant received out of band (an op's reply carries the runner's first grant). */
    applyGrant(total: number): void;
    /** Initial grant this end announces to the peer (its receive window). */
    get recvWindow(): number;
    /** Stops receiving; pending sends fail. Idempotent. */
    close(err?: Error): void;
    private receive;
    private drain;
    private publish;
}

import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  decodeRpcReply,
  DEFAULT_STREAM_WINDOW,
  PaddockError,
  STREAM_CHUNK_BYTES,
  subjects,
  type RunnerRpcOp,
  type RunnerRpcRequest,
  type RunnerRpcResult,
  type StreamFrame,
  type StreamFrameHeaderInput,
} from '@paddock/contracts';
import { StreamEndpoint } from '../../src/nats/stream-endpoint';

/**
 * A caller of the runner speaking raw NATS, as the gateway does: JSON requests on
 * `subjects.runnerRpc`, the contracts' reply envelope, and the stream protocol with credit.
 * Used by the integration tests and the benchmark only.
 */
export class RunnerTestClient {
  constructor(
    readonly nc: NatsConnection,
    readonly runnerId: string,
    readonly timeoutMs = 30_000,
  ) {}

  async call<Op extends RunnerRpcOp>(op: Op, req: RunnerRpcRequest<Op>): Promise<RunnerRpcResult<Op>> {
    const msg = await this.nc.request(subjects.runnerRpc(this.runnerId, op), JSON.stringify(req), { timeout: this.timeoutMs });
    const reply = decodeRpcReply(op, msg.json());
    if (!reply.ok) throw PaddockError.fromBody(reply.error);
    return reply.result;
  }

  /** Calls and returns the error; fails the test if the call succeeded. */
  async callError<Op extends RunnerRpcOp>(op: Op, req: RunnerRpcRequest<Op>): Promise<PaddockError> {
    try {
      await this.call(op, req);
    } catch (e) {
      if (e instanceof PaddockError) return e;
      throw e;
    }
    throw new Error(`expected ${op} to fail`);
  }

  /**
   * Opens the caller's end of a stream BEFORE the op is requested (so no frame is missed).
   * `window` is the caller's receive window (send it as `initialCredit`).
   */
  openStream(window = DEFAULT_STREAM_WINDOW, streamId = `s${randomUUID().replace(/-/g, '')}`): ClientStream {
    return new ClientStream(this.nc, this.runnerId, streamId, window);
  }
}

/**
 * The caller's end: frames are queued as they arrive and handed out by `next()`; credit is granted
 * only when the test consumes a frame, so a slow consumer really slows the runner down.
 */
export class ClientStream {
  readonly endpoint: StreamEndpoint;
  private readonly frames: StreamFrame[] = [];
  private wake: (() => void) | undefined;
  private closedWith: Error | undefined;
  private ended = false;
  /** Most frames ever waiting here unconsumed: never above the window if the runner honours credit. */
  maxQueued = 0;

  constructor(
    nc: NatsConnection,
    runnerId: string,
    readonly streamId: string,
    readonly window: number,
  ) {
    this.endpoint = new StreamEndpoint(nc, {
      sendSubject: subjects.streamToRunner(runnerId, streamId),
      recvSubject: subjects.streamFromRunner(runnerId, streamId),
      initialSendGrant: 0,
      recvWindow: window,
      idleTimeoutMs: 30_000,
    });
    this.endpoint.onFrame = (f) => {
      // Copy: the message buffer is not ours to keep across turns.
      this.frames.push({ header: f.header, payload: f.payload.slice() });
      this.maxQueued = Math.max(this.maxQueued, this.frames.filter((q) => q.header.seq > 0).length);
      this.wake?.();
    };
    this.endpoint.onClose = (err) => {
      this.ended = true;
      this.closedWith = err;
      this.wake?.();
    };
  }

  /** The runner's initial grant for stdin/data (from the op's reply). */
  grantSend(total: number): void {
    this.endpoint.applyGrant(total);
  }

  /** Frames received and not yet taken by `next()`. */
  get queued(): number {
    return this.frames.length;
  }

  /** Next frame; credited frames are marked consumed (granting more) as they are handed out. */
  async next(timeoutMs = 30_000): Promise<StreamFrame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const f = this.frames.shift();
      if (f) {
        if (f.header.seq > 0) this.endpoint.consumed(f.header.seq);
        return f;
      }
      if (this.ended) throw this.closedWith ?? new Error('stream closed');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no stream frame within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  /** Sends `data` (or `stdin`) in chunks under the runner's credit. */
  async sendBytes(kind: 'data' | 'stdin', bytes: Uint8Array): Promise<void> {
    for (let off = 0; off < bytes.length; off += STREAM_CHUNK_BYTES) {
      await this.endpoint.sendCredited({ kind }, bytes.subarray(off, off + STREAM_CHUNK_BYTES));
    }
  }

  send(header: StreamFrameHeaderInput): void {
    this.endpoint.sendControl(header);
  }

  close(): void {
    this.endpoint.close();
  }
}

import {
  decodeFrame,
  encodeFrame,
  isCreditedFrame,
  PaddockError,
  ReceiveWindow,
  SendWindow,
  type StreamFrame,
  type StreamFrameHeaderInput,
} from '@paddock/contracts';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';

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

interface Pending {
  header: StreamFrameHeaderInput;
  payload: Uint8Array;
  resolve: () => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
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
export class StreamEndpoint {
  onFrame: (frame: StreamFrame) => void = () => undefined;
  /** Called once when the stream fails (bad frame from the peer, credit timeout) or closes. */
  onClose: (err?: Error) => void = () => undefined;

  private readonly send: SendWindow;
  private readonly recv: ReceiveWindow;
  private readonly queue: Pending[] = [];
  private readonly sub: Subscription;
  private closed = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly opts: StreamEndpointOptions,
  ) {
    this.send = new SendWindow(opts.initialSendGrant);
    this.recv = new ReceiveWindow(opts.recvWindow);
    this.sub = nc.subscribe(opts.recvSubject, {
      callback: (err, msg) => {
        if (err) return this.close(err);
        this.receive(msg.data);
      },
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Sends a payload-carrying frame (stdout/stderr/stdin/data) once credit allows. */
  sendCredited(header: StreamFrameHeaderInput, payload: Uint8Array): Promise<void> {
    if (this.closed) return Promise.reject(new Error('stream closed'));
    if (this.queue.length === 0 && this.send.canSend()) {
      this.publish({ ...header, seq: this.send.next() }, payload);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.close(
          new PaddockError('deadline_exceeded', `stream peer granted no credit for ${this.opts.idleTimeoutMs} ms; stream abandoned`, {
            reason: 'CWSANDBOX_INTERNAL',
          }),
        );
      }, this.opts.idleTimeoutMs);
      timer.unref();
      this.queue.push({ header, payload, resolve, reject, timer });
    });
  }

  /** Sends a control frame (never held back by the window). */
  sendControl(header: StreamFrameHeaderInput): void {
    if (this.closed) return;
    this.publish(header, undefined);
  }

  /** Marks an inbound credited frame as handed on; grants more credit when half the window is used. */
  consumed(seq: number): void {
    if (this.closed) return;
    let grant: number | undefined;
    try {
      grant = this.recv.onFrame(seq);
    } catch (e) {
      return this.close(e as Error);
    }
    if (grant !== undefined) this.publish({ kind: 'credit', grant }, undefined);
  }

  /** Applies a grant received out of band (an op's reply carries the runner's first grant). */
  applyGrant(total: number): void {
    this.send.grant(total);
    this.drain();
  }

  /** Initial grant this end announces to the peer (its receive window). */
  get recvWindow(): number {
    return this.recv.window;
  }

  /** Stops receiving; pending sends fail. Idempotent. */
  close(err?: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.sub.unsubscribe();
    for (const p of this.queue.splice(0)) {
      clearTimeout(p.timer);
      p.reject(err ?? new Error('stream closed'));
    }
    this.onClose(err);
  }

  private receive(body: Uint8Array): void {
    let frame: StreamFrame;
    try {
      frame = decodeFrame(body);
    } catch (e) {
      return this.close(e as Error);
    }
    if (frame.header.kind === 'credit') {
      if (frame.header.grant !== undefined) this.send.grant(frame.header.grant);
      this.drain();
      return;
    }
    if (isCreditedFrame(frame.header.kind) && frame.header.seq === 0) {
      return this.close(new Error(`credited ${frame.header.kind} frame without a sequence number`));
    }
    this.onFrame(frame);
  }

  private drain(): void {
    while (this.queue.length > 0 && this.send.canSend()) {
      const p = this.queue.shift() as Pending;
      clearTimeout(p.timer);
      this.publish({ ...p.header, seq: this.send.next() }, p.payload);
      p.resolve();
    }
  }

  private publish(header: StreamFrameHeaderInput, payload: Uint8Array | undefined): void {
    try {
      this.nc.publish(this.opts.sendSubject, encodeFrame(header, payload));
    } catch (e) {
      // The connection is closing (runner shutdown): the stream cannot continue. Closing here
      // turns every pending and later send into a rejection instead of a throw in a callback.
      queueMicrotask(() => this.close(e as Error));
    }
  }
}

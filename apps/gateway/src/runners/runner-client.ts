import { randomUUID } from 'node:crypto';
import { NoRespondersError, TimeoutError, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import {
  DEFAULT_STREAM_WINDOW,
  PaddockError,
  ReceiveWindow,
  SendWindow,
  decodeFrame,
  decodeRpcReply,
  encodeFrame,
  isCreditedFrame,
  subjects,
  type ExecResponse,
  type RunnerRpcOp,
  type RunnerRpcRequest,
  type RunnerRpcResult,
  type RpcTrace,
  RunnerRpcReplyEnvelopeSchema,
  SandboxStatusSchema,
  type SandboxStatus,
  type StreamFrame,
  type StreamFrameHeaderInput,
} from '@paddock/contracts';
import { currentRequestId } from '@paddock/kit';
import { z } from 'zod';

/**
 * A runner could not be reached. `ambiguous` = the request may have been delivered (a timeout),
 * as opposed to "certainly not delivered" (no responders, connection closed).
 */
export class RunnerTransportError extends PaddockError {
  constructor(
    readonly runnerId: string,
    readonly ambiguous: boolean,
    detail: string,
  ) {
    super('unavailable', `runner ${runnerId} is unavailable (${detail})`, {
      reason: 'CWSANDBOX_RUNNER_UNAVAILABLE',
      metadata: { runnerId },
    });
  }
}

const isInt = (v: unknown): v is number => Number.isInteger(v);
const isCount = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0;

/**
 * The successful exec reply, checked by hand: it is on every unary exec's path, and the zod
 * envelope + schema parse costs more than the rest of the gateway's own work on the reply. It
 * accepts exactly what `decodeRpcReply('exec', …)` accepts as `ok` and builds the same object
 * (schema keys only); anything else (errors, a malformed reply) takes the zod path, so error
 * behaviour is unchanged.
 */
export function fastExecResult(raw: unknown): ExecResponse | null {
  if (typeof raw !== 'object' || raw === null || (raw as { ok?: unknown }).ok !== true) return null;
  const r = (raw as { result?: unknown }).result;
  if (typeof r !== 'object' || r === null) return null;
  const v = r as Record<string, unknown>;
  if (
    !isInt(v.exitCode) ||
    typeof v.stdoutBase64 !== 'string' ||
    typeof v.stderrBase64 !== 'string' ||
    typeof v.stdoutTruncated !== 'boolean' ||
    typeof v.stderrTruncated !== 'boolean' ||
    !isCount(v.stdoutBytesProduced) ||
    !isCount(v.stderrBytesProduced) ||
    typeof v.timedOut !== 'boolean'
  ) {
    return null;
  }
  return {
    exitCode: v.exitCode,
    stdoutBase64: v.stdoutBase64,
    stderrBase64: v.stderrBase64,
    stdoutTruncated: v.stdoutTruncated,
    stderrTruncated: v.stderrTruncated,
    stdoutBytesProduced: v.stdoutBytesProduced,
    stderrBytesProduced: v.stderrBytesProduced,
    timedOut: v.timedOut,
  };
}

const FAST_RESULTS: Partial<Record<RunnerRpcOp, (raw: unknown) => unknown>> = { exec: fastExecResult };

/**
 * What the create path keeps of a create reply: the sandbox's status. The runner echoes the whole
 * spec too, and validating that echo (the gateway stores the spec it was asked for, never the
 * echo) cost as much as the rest of the gateway's work on the reply. Unknown keys are stripped
 * as the full schema would.
 */
const CreateReplyStatusSchema = z.object({ sandbox: z.object({ status: SandboxStatusSchema }) });

/** Request/reply and streams to runners over NATS, with the contract's envelope and error model. */
export class RunnerClient {
  constructor(
    private readonly nc: NatsConnection,
    private readonly timeoutMs: number,
    /** Liveness of a runner (fresh heartbeats): a stream to a dead runner fails instead of hanging. */
    private readonly isAlive: (runnerId: string) => boolean = () => true,
  ) {}

  async call<Op extends RunnerRpcOp>(
    runnerId: string,
    op: Op,
    request: RunnerRpcRequest<Op>,
    timeoutMs = this.timeoutMs,
  ): Promise<RunnerRpcResult<Op>> {
    const raw = await this.request(runnerId, op, request, timeoutMs);
    const fast = FAST_RESULTS[op]?.(raw);
    if (fast) return fast as RunnerRpcResult<Op>;
    const reply = decodeRpcReply(op, raw);
    if (!reply.ok) throw PaddockError.fromBody(reply.error);
    return reply.result;
  }

  /** The reply's body, parsed JSON, unchecked; transport failures as RunnerTransportError. */
  private async request<Op extends RunnerRpcOp>(runnerId: string, op: Op, request: RunnerRpcRequest<Op>, timeoutMs: number): Promise<unknown> {
    // The client request this call serves, so the runner's lines for it carry the same id.
    const requestId = currentRequestId();
    const body = JSON.stringify(requestId === undefined ? request : { ...request, trace: { requestId } satisfies RpcTrace });
    try {
      const msg = await this.nc.request(subjects.runnerRpc(runnerId, op), body, { timeout: timeoutMs });
      return msg.json();
    } catch (e) {
      throw toTransportError(runnerId, e);
    }
  }

  /** `create`, keeping (and validating) only the created sandbox's status (CreateReplyStatusSchema). */
  async create(runnerId: string, request: RunnerRpcRequest<'create'>): Promise<{ status: SandboxStatus }> {
    const raw = await this.request(runnerId, 'create', request, this.timeoutMs);
    const env = RunnerRpcReplyEnvelopeSchema.parse(raw);
    if (!env.ok) throw PaddockError.fromBody(env.error);
    return CreateReplyStatusSchema.parse(env.result).sandbox;
  }

  /**
   * Opens a streamed op (`execStream`, `logs`, streamed `readFile`/`writeFile`): subscribes to the
   * runner's side of the channel first, then sends the request.
   */
  async openStream<Op extends 'execStream' | 'logs' | 'readFile' | 'writeFile' | 'portForward'>(
    runnerId: string,
    op: Op,
    request: Omit<RunnerRpcRequest<Op>, 'streamId'>,
    window = DEFAULT_STREAM_WINDOW,
  ): Promise<{ stream: RunnerStream; opened: RunnerRpcResult<Op> }> {
    const streamId = randomUUID().replace(/-/g, '');
    const stream = new RunnerStream(this.nc, runnerId, streamId, window, this.isAlive);
    try {
      const opened = await this.call(runnerId, op, { ...request, streamId, initialCredit: window } as RunnerRpcRequest<Op>);
      const credit = (opened as { stdinCredit?: number }).stdinCredit;
      stream.setSendCredit(credit ?? 0);
      return { stream, opened };
    } catch (e) {
      stream.close();
      throw e;
    }
  }
}

function toTransportError(runnerId: string, e: unknown): RunnerTransportError {
  if (e instanceof NoRespondersError) return new RunnerTransportError(runnerId, false, 'no responders');
  if (e instanceof TimeoutError) return new RunnerTransportError(runnerId, true, 'timeout');
  const cause = (e as { cause?: unknown }).cause;
  if (cause instanceof NoRespondersError) return new RunnerTransportError(runnerId, false, 'no responders');
  if (cause instanceof TimeoutError) return new RunnerTransportError(runnerId, true, 'timeout');
  return new RunnerTransportError(runnerId, true, e instanceof Error ? e.message : String(e));
}

/**
 * One flow-controlled channel to a runner. Incoming frames are queued (bounded by the window we
 * granted) and handed out by `next()`; a credit is granted back only once the consumer asked for
 * the following frame, so a slow client slows the runner instead of filling our memory.
 */
export class RunnerStream {
  private readonly sub: Subscription;
  private readonly recv: ReceiveWindow;
  private send: SendWindow = new SendWindow(0);
  private readonly queue: StreamFrame[] = [];
  private waiter: (() => void) | null = null;
  private creditWaiters: (() => void)[] = [];
  private pendingGrantSeq: number | null = null;
  private closed = false;
  private failure: Error | null = null;

  constructor(
    private readonly nc: NatsConnection,
    readonly runnerId: string,
    readonly streamId: string,
    window: number,
    private readonly isAlive: (runnerId: string) => boolean = () => true,
  ) {
    this.recv = new ReceiveWindow(window);
    this.sub = nc.subscribe(subjects.streamFromRunner(runnerId, streamId), {
      callback: (err, msg) => {
        if (err) return this.fail(err);
        let frame: StreamFrame;
        try {
          frame = decodeFrame(msg.data);
        } catch (e) {
          return this.fail(e instanceof Error ? e : new Error(String(e)));
        }
        if (frame.header.kind === 'credit') {
          if (frame.header.grant !== undefined) this.send.grant(frame.header.grant);
          this.wakeCredit();
          return;
        }
        this.queue.push(frame);
        this.wake();
      },
    });
  }

  setSendCredit(initial: number): void {
    this.send = new SendWindow(initial);
  }

  /** Next frame from the runner, or null once the stream is closed. */
  async next(): Promise<StreamFrame | null> {
    this.flushGrant();
    for (;;) {
      const f = this.queue.shift();
      if (f) {
        if (isCreditedFrame(f.header.kind)) this.pendingGrantSeq = f.header.seq;
        return f;
      }
      if (this.failure) throw this.failure;
      if (this.closed) return null;
      if (!this.isAlive(this.runnerId)) throw new RunnerTransportError(this.runnerId, true, 'runner stopped heartbeating during the stream');
      // Wake at least every second to re-check the runner's liveness.
      await new Promise<void>((r) => {
        const t = setTimeout(r, 1_000);
        this.waiter = () => {
          clearTimeout(t);
          r();
        };
      });
    }
  }

  async *frames(): AsyncGenerator<StreamFrame> {
    try {
      for (;;) {
        const f = await this.next();
        if (!f) return;
        yield f;
      }
    } finally {
      this.close();
    }
  }

  /** Sends a credited frame (stdin/data), waiting for the runner's grant when the window is full. */
  async sendData(kind: 'stdin' | 'data', payload: Uint8Array): Promise<void> {
    while (!this.send.canSend()) {
      if (this.closed) throw new Error('stream closed');
      await new Promise<void>((r) => this.creditWaiters.push(r));
    }
    this.publish({ kind, seq: this.send.next() }, payload);
  }

  /** Sends a control frame (never held back by the window). */
  control(header: StreamFrameHeaderInput): void {
    this.publish(header);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.sub.unsubscribe();
    this.wake();
    this.wakeCredit();
  }

  private flushGrant(): void {
    if (this.pendingGrantSeq === null) return;
    const grant = this.recv.onFrame(this.pendingGrantSeq);
    this.pendingGrantSeq = null;
    if (grant !== undefined) this.publish({ kind: 'credit', grant });
  }

  private publish(header: StreamFrameHeaderInput, payload?: Uint8Array): void {
    if (this.closed) return;
    try {
      this.nc.publish(subjects.streamToRunner(this.runnerId, this.streamId), encodeFrame(header, payload));
    } catch (e) {
      this.fail(e instanceof Error ? e : new Error(String(e)));
    }
  }

  private fail(e: Error): void {
    this.failure ??= e;
    this.wake();
    this.wakeCredit();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  private wakeCredit(): void {
    const ws = this.creditWaiters;
    this.creditWaiters = [];
    for (const w of ws) w();
  }
}

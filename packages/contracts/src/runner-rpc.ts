import { z } from 'zod';
import { SandboxStateSchema } from './enums';
import { ApiErrorBodySchema, type ApiErrorBody } from './errors';
import { RequestIdSchema } from './request-id';
import { SandboxSchema } from './sandbox';
import { PauseSandboxRequestSchema, PauseSandboxResponseSchema, ResumeSandboxRequestSchema } from './sandbox-pause';
import { DeleteSnapshotRequestSchema, DeleteSnapshotResponseSchema, SnapshotSandboxRequestSchema, SnapshotSandboxResponseSchema } from './fs-snapshot';
import { SandboxSpecSchema } from './sandbox-spec';
import { ResolvedSecretEnvSchema } from './secret-stores';
import type { RunnerRpcOp } from './subjects';

/**
 * The runner's request/reply protocol over NATS (gateway → runner), plus the flow-controlled
 * streaming channel used by `execStream`, `logs` and large `readFile`/`writeFile`.
 *
 * Request/reply: the request body is the op's JSON request; the reply body is a
 * {@link RunnerRpcReply}: `{ ok: true, result }` or `{ ok: false, error: ApiErrorBody }` (the shape of
 * `PaddockError.toBody()`, the product's reason codes). Subjects come from
 * `subjects.runnerRpc(runnerId, op)`; the runner serves them in `queueGroups.runner(runnerId)`.
 *
 * Streams: the caller picks a `streamId`, subscribes to `subjects.streamFromRunner(runnerId, streamId)`
 * BEFORE sending the op's request (so no frame is missed), and sends its own frames on
 * `subjects.streamToRunner(runnerId, streamId)`. Each frame is one NATS message whose body is
 * {@link encodeFrame}'s output. See {@link SendWindow}/{@link ReceiveWindow} for the credit rules.
 */

/**
 * Every request may name the client HTTP request (its `x-request-id`) it serves: the runner logs
 * its lines for the operation with it, so one id joins the gateway's and the runner's lines.
 * Absent for the gateway's own background work (reconciliation). Nested so that it is never
 * taken for a create's idempotency key, which the public API also calls `requestId`.
 */
export const RpcTraceSchema = z.object({ requestId: RequestIdSchema });
export type RpcTrace = z.infer<typeof RpcTraceSchema>;
const Traced = { trace: RpcTraceSchema.optional() };

/** Every op names the sandbox's organization so a runner never serves another tenant's sandbox. */
const SandboxRef = {
  ...Traced,
  sandboxId: z.string().min(1),
  organizationId: z.string().min(1),
};

/**
 * Largest file content carried inline (base64 in JSON) by `readFile`/`writeFile`; beyond it use a
 * stream. Its base64 plus the JSON envelope must fit in one NATS message, and nats-server's
 * default max_payload is 1 MiB: a 1 MB file inline was refused by NATS (`max_payload size exceeded`).
 */
export const MAX_INLINE_FILE_BYTES = 512 * 1024;
/** Largest `maxOutputBytes` a unary exec may ask for (per stream). */
export const MAX_UNARY_OUTPUT_BYTES = 4 * 1024 * 1024;
/** Payload bytes per stream frame: well under nats-server's default 1 MiB max_payload. */
export const STREAM_CHUNK_BYTES = 64 * 1024;
/** Default credit (in frames) a receiver grants: 16 × 64 KiB = 1 MiB in flight per stream. */
export const DEFAULT_STREAM_WINDOW = 16;

const StreamOpen = {
  /** Caller-chosen id of the stream channel (a NATS subject token: no dots, spaces or wildcards). */
  streamId: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'streamId must be 1-128 chars of [A-Za-z0-9_-]'),
  /** Frames the caller can receive before it grants more (its receive window). */
  initialCredit: z.number().int().positive().max(1024).default(DEFAULT_STREAM_WINDOW),
};

// ---------------------------------------------------------------------------------------------
// create / get / list / delete
// ---------------------------------------------------------------------------------------------

export const CreateSandboxRequestSchema = z.object({
  /** Chosen by the caller: the idempotency key. A redelivered create returns the same sandbox. */
  ...SandboxRef,
  spec: SandboxSpecSchema,
  labels: z.record(z.string(), z.string()).optional(),
  /**
   * The values of the spec's `secretStores` mappings, resolved by the gateway at create time.
   * The runner hands them to the launch and keeps them nowhere else: not in its records, the
   * sandbox's persisted metadata, or the request fingerprint.
   */
  secretEnv: ResolvedSecretEnvSchema.optional(),
  /** Docker config JSON for the spec's `imagePullCredentials`, resolved the same way and kept the same way (nowhere). */
  imagePullDockerConfig: z.string().optional(),
});
export type CreateSandboxRequest = z.infer<typeof CreateSandboxRequestSchema>;
export type CreateSandboxRequestInput = z.input<typeof CreateSandboxRequestSchema>;
/** The sandbox in `STATE_PENDING`/`STATE_CREATING`: the runner replies before the sandbox runs. */
export const CreateSandboxResponseSchema = z.object({ sandbox: SandboxSchema });
export type CreateSandboxResponse = z.infer<typeof CreateSandboxResponseSchema>;

export const GetSandboxRequestSchema = z.object({ ...SandboxRef });
export type GetSandboxRequest = z.infer<typeof GetSandboxRequestSchema>;
export const GetSandboxResponseSchema = z.object({ sandbox: SandboxSchema });
export type GetSandboxResponse = z.infer<typeof GetSandboxResponseSchema>;

export const ListSandboxesRequestSchema = z.object({
  ...Traced,
  organizationId: z.string().min(1),
  /** Any-of. */
  states: z.array(SandboxStateSchema).optional(),
  /** AND: every tag must be on the sandbox's spec. */
  tags: z.array(z.string()).optional(),
  showTerminated: z.boolean().default(false),
});
export type ListSandboxesRequest = z.infer<typeof ListSandboxesRequestSchema>;
export const ListSandboxesResponseSchema = z.object({ sandboxes: z.array(SandboxSchema) });
export type ListSandboxesResponse = z.infer<typeof ListSandboxesResponseSchema>;

export const DeleteSandboxRequestSchema = z.object({
  ...SandboxRef,
  /** 0 (default) stops at once; otherwise SIGTERM, then SIGKILL after this many seconds (max 300). */
  gracePeriodSeconds: z.number().int().min(0).max(300).default(0),
  allowMissing: z.boolean().default(false),
});
export type DeleteSandboxRequest = z.infer<typeof DeleteSandboxRequestSchema>;
/** `sandbox` is absent only for an `allowMissing` delete of an unknown sandbox. */
export const DeleteSandboxResponseSchema = z.object({ sandbox: SandboxSchema.optional() });
export type DeleteSandboxResponse = z.infer<typeof DeleteSandboxResponseSchema>;

// ---------------------------------------------------------------------------------------------
// exec
// ---------------------------------------------------------------------------------------------

const Argv = z.array(z.string()).min(1, 'command cannot be empty');
const AbsolutePath = z.string().regex(/^\//, 'must be an absolute path');

export const ExecRequestSchema = z.object({
  ...SandboxRef,
  argv: Argv,
  /** The container to run in (omitted = the primary). */
  container: z.string().min(1).optional(),
  env: z.record(z.string(), z.string()).default({}),
  cwd: AbsolutePath.optional(),
  /**
   * 0/omitted: no timeout beyond the sandbox's lifetime. Past it the command is killed and the reply
   * (still `ok`, with the output so far) says `timedOut: true`; the gateway surfaces that as
   * `CWSANDBOX_COMMAND_TIMEOUT`.
   */
  timeoutSeconds: z.number().positive().optional(),
  /** Captured bytes per stream; 0/omitted = the platform default cap (1 MiB). */
  maxOutputBytes: z.number().int().min(0).max(MAX_UNARY_OUTPUT_BYTES).default(0),
  stdinBase64: z.base64().optional(),
});
export type ExecRequest = z.infer<typeof ExecRequestSchema>;
export type ExecRequestInput = z.input<typeof ExecRequestSchema>;
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;

export const ExecResponseSchema = z.object({
  exitCode: z.number().int(),
  stdoutBase64: z.string(),
  stderrBase64: z.string(),
  stdoutTruncated: z.boolean(),
  stderrTruncated: z.boolean(),
  stdoutBytesProduced: z.number().int().nonnegative(),
  stderrBytesProduced: z.number().int().nonnegative(),
  timedOut: z.boolean(),
});
export type ExecResponse = z.infer<typeof ExecResponseSchema>;

/**
 * Opens an interactive exec. Frames runner → caller: `ready`, `stdout`/`stderr`* (credit-limited),
 * then `exit` or `error`. Caller → runner: `stdin`* (credit-limited by the runner's grants),
 * `stdinEof`, `resize`, `credit`, `cancel`.
 */
export const ExecStreamRequestSchema = z.object({
  ...SandboxRef,
  ...StreamOpen,
  argv: Argv,
  /** The container to run in (omitted = the primary). */
  container: z.string().min(1).optional(),
  env: z.record(z.string(), z.string()).default({}),
  cwd: AbsolutePath.optional(),
  tty: z.boolean().default(false),
  cols: z.number().int().positive().optional(),
  rows: z.number().int().positive().optional(),
  /** Kills the command after this long; the `exit` frame then says `timedOut`. */
  timeoutSeconds: z.number().positive().optional(),
});
export type ExecStreamRequest = z.infer<typeof ExecStreamRequestSchema>;
export type ExecStreamRequestInput = z.input<typeof ExecStreamRequestSchema>;
/** `stdinCredit`: frames of stdin the caller may send before waiting for a `credit` frame. */
export const StreamOpenedResponseSchema = z.object({ streamId: z.string(), stdinCredit: z.number().int().nonnegative() });
export type StreamOpenedResponse = z.infer<typeof StreamOpenedResponseSchema>;

// ---------------------------------------------------------------------------------------------
// files
// ---------------------------------------------------------------------------------------------

/**
 * Without `streamId`: the content comes back inline (base64), up to {@link MAX_INLINE_FILE_BYTES},
 * else `CWSANDBOX_FILE_TOO_LARGE`. With `streamId`: the reply is `{ streamed: true, size }` and the
 * content follows as `data` frames then `eof` (or `error`).
 */
export const ReadFileRequestSchema = z.object({
  ...SandboxRef,
  path: AbsolutePath,
  streamId: StreamOpen.streamId.optional(),
  initialCredit: StreamOpen.initialCredit,
});
export type ReadFileRequest = z.infer<typeof ReadFileRequestSchema>;
export type ReadFileRequestInput = z.input<typeof ReadFileRequestSchema>;
export const ReadFileResponseSchema = z.union([
  z.object({ streamed: z.literal(false), contentBase64: z.string(), size: z.number().int().nonnegative() }),
  z.object({ streamed: z.literal(true), size: z.number().int().nonnegative() }),
]);
export type ReadFileResponse = z.infer<typeof ReadFileResponseSchema>;

/**
 * Inline (`contentBase64`; empty = zero-byte file) or streamed (`streamId`): the reply then is
 * `{ streamed: true, stdinCredit }`, the caller sends `data` frames and `eof`, and the runner ends
 * the stream with `eof { totalBytes }` once the file is fully written (or `error`).
 */
export const WriteFileRequestSchema = z
  .object({
    ...SandboxRef,
    path: AbsolutePath,
    mode: z.number().int().min(0).max(0o7777).optional(),
    contentBase64: z.base64().optional(),
    streamId: StreamOpen.streamId.optional(),
  })
  .refine((r) => (r.contentBase64 === undefined) !== (r.streamId === undefined), {
    message: 'exactly one of contentBase64 or streamId must be set',
    path: ['contentBase64'],
  });
export type WriteFileRequest = z.infer<typeof WriteFileRequestSchema>;
export const WriteFileResponseSchema = z.union([
  z.object({ streamed: z.literal(false), bytesWritten: z.number().int().nonnegative() }),
  z.object({ streamed: z.literal(true), stdinCredit: z.number().int().nonnegative() }),
]);
export type WriteFileResponse = z.infer<typeof WriteFileResponseSchema>;

export const FileStatSchema = z.object({
  path: z.string(),
  type: z.enum(['file', 'directory', 'symlink', 'other']),
  size: z.number().int().nonnegative(),
  mode: z.number().int(),
  modifiedAt: z.string(),
});
export type FileStatWire = z.infer<typeof FileStatSchema>;

export const ListDirRequestSchema = z.object({ ...SandboxRef, path: AbsolutePath });
export type ListDirRequest = z.infer<typeof ListDirRequestSchema>;
export const ListDirResponseSchema = z.object({ entries: z.array(FileStatSchema) });
export type ListDirResponse = z.infer<typeof ListDirResponseSchema>;

export const StatRequestSchema = z.object({ ...SandboxRef, path: AbsolutePath });
export type StatRequest = z.infer<typeof StatRequestSchema>;
export const StatResponseSchema = z.object({ stat: FileStatSchema });
export type StatResponse = z.infer<typeof StatResponseSchema>;

export const RemoveRequestSchema = z.object({ ...SandboxRef, path: AbsolutePath, recursive: z.boolean().default(false) });
export type RemoveRequest = z.infer<typeof RemoveRequestSchema>;
export const RemoveResponseSchema = z.object({});
export type RemoveResponse = z.infer<typeof RemoveResponseSchema>;

// ---------------------------------------------------------------------------------------------
// logs
// ---------------------------------------------------------------------------------------------

/** DeleteSandboxLogs: removes the retained logs of an ended sandbox (refused while it is live). */
export const DeleteLogsRequestSchema = z.object({ ...SandboxRef });
export type DeleteLogsRequest = z.infer<typeof DeleteLogsRequestSchema>;
export const DeleteLogsResponseSchema = z.object({});
export type DeleteLogsResponse = z.infer<typeof DeleteLogsResponseSchema>;

/**
 * Streams the primary process's combined log as `stdout`/`stderr` frames, each with its byte
 * `offset` in the combined log. Resume after a dropped subscription with
 * `fromOffset = lastFrame.offset + lastFrame.payload.length`: no gap, no duplicate. Without
 * `follow` the stream ends with `eof` at the current end; with it, at the sandbox's end.
 */
export const LogsRequestSchema = z
  .object({
    ...SandboxRef,
    ...StreamOpen,
    follow: z.boolean().default(false),
    /** Whose output (omitted = the primary container's). */
    container: z.string().min(1).optional(),
    tailLines: z.number().int().positive().optional(),
    sinceTime: z.iso.datetime({ offset: true }).optional(),
    fromOffset: z.number().int().nonnegative().optional(),
  })
  .refine((r) => r.fromOffset === undefined || (r.tailLines === undefined && r.sinceTime === undefined), {
    message: 'fromOffset is mutually exclusive with tailLines and sinceTime',
    path: ['fromOffset'],
  });
export type LogsRequest = z.infer<typeof LogsRequestSchema>;
export type LogsRequestInput = z.input<typeof LogsRequestSchema>;

/**
 * `portForward`: one TCP connection to `port` on the sandbox's own loopback, relayed as a stream
 * (`stdin` frames in, `stdout` frames out, `stdinEof` half-closes, `eof` when the sandbox's side
 * closes). Only a port the sandbox declares as a service, and only while it runs.
 */
export const PortForwardRequestSchema = z.object({
  ...SandboxRef,
  ...StreamOpen,
  port: z.number().int().min(1).max(65_535),
});
export type PortForwardRequest = z.infer<typeof PortForwardRequestSchema>;

/** Request and response schema of every op, keyed by op name (the last token of the subject). */
export const RUNNER_RPC_SCHEMAS = {
  create: { request: CreateSandboxRequestSchema, response: CreateSandboxResponseSchema },
  get: { request: GetSandboxRequestSchema, response: GetSandboxResponseSchema },
  list: { request: ListSandboxesRequestSchema, response: ListSandboxesResponseSchema },
  delete: { request: DeleteSandboxRequestSchema, response: DeleteSandboxResponseSchema },
  exec: { request: ExecRequestSchema, response: ExecResponseSchema },
  execStream: { request: ExecStreamRequestSchema, response: StreamOpenedResponseSchema },
  readFile: { request: ReadFileRequestSchema, response: ReadFileResponseSchema },
  writeFile: { request: WriteFileRequestSchema, response: WriteFileResponseSchema },
  listDir: { request: ListDirRequestSchema, response: ListDirResponseSchema },
  stat: { request: StatRequestSchema, response: StatResponseSchema },
  remove: { request: RemoveRequestSchema, response: RemoveResponseSchema },
  logs: { request: LogsRequestSchema, response: StreamOpenedResponseSchema },
  deleteLogs: { request: DeleteLogsRequestSchema, response: DeleteLogsResponseSchema },
  portForward: { request: PortForwardRequestSchema, response: StreamOpenedResponseSchema },
  pause: { request: PauseSandboxRequestSchema, response: PauseSandboxResponseSchema },
  resume: { request: ResumeSandboxRequestSchema, response: PauseSandboxResponseSchema },
  snapshot: { request: SnapshotSandboxRequestSchema, response: SnapshotSandboxResponseSchema },
  deleteSnapshot: { request: DeleteSnapshotRequestSchema, response: DeleteSnapshotResponseSchema },
} as const satisfies Record<RunnerRpcOp, { request: z.ZodType; response: z.ZodType }>;

export type RunnerRpcRequest<Op extends RunnerRpcOp> = z.input<(typeof RUNNER_RPC_SCHEMAS)[Op]['request']>;
export type RunnerRpcResult<Op extends RunnerRpcOp> = z.infer<(typeof RUNNER_RPC_SCHEMAS)[Op]['response']>;

// ---------------------------------------------------------------------------------------------
// reply envelope
// ---------------------------------------------------------------------------------------------

export type RunnerRpcReply<T> = { ok: true; result: T } | { ok: false; error: ApiErrorBody };

export const RunnerRpcReplyEnvelopeSchema = z.union([
  z.object({ ok: z.literal(true), result: z.unknown() }),
  z.object({ ok: z.literal(false), error: ApiErrorBodySchema }),
]);

/**
 * Decodes a reply body and validates the result against the op's response schema.
 *
 * @example
 * const reply = decodeRpcReply('create', JSON.parse(msg.string()));
 * if (!reply.ok) throw PaddockError.fromBody(reply.error);
 */
export function decodeRpcReply<Op extends RunnerRpcOp>(op: Op, body: unknown): RunnerRpcReply<RunnerRpcResult<Op>> {
  const env = RunnerRpcReplyEnvelopeSchema.parse(body);
  if (!env.ok) return env;
  const schema: z.ZodType = RUNNER_RPC_SCHEMAS[op].response;
  return { ok: true, result: schema.parse(env.result) as RunnerRpcResult<Op> };
}

// ---------------------------------------------------------------------------------------------
// stream frames
// ---------------------------------------------------------------------------------------------

/**
 * Frame kinds.
 * - runner → caller: `ready`, `stdout`, `stderr`, `data`, `eof`, `exit`, `error`, `credit` (stdin/upload grants)
 * - caller → runner: `stdin`, `stdinEof`, `resize`, `data`, `eof`, `credit` (output grants), `cancel`
 *
 * `stdout`, `stderr`, `stdin` and `data` carry a payload and consume one unit of credit each;
 * the others are control frames and are never held back by the window.
 */
export const STREAM_FRAME_KINDS = [
  'ready',
  'stdout',
  'stderr',
  'exit',
  'error',
  'stdin',
  'stdinEof',
  'resize',
  'credit',
  'cancel',
  'data',
  'eof',
] as const;
export type StreamFrameKind = (typeof STREAM_FRAME_KINDS)[number];
export const CREDITED_FRAME_KINDS: readonly StreamFrameKind[] = ['stdout', 'stderr', 'stdin', 'data'];

export const StreamFrameHeaderSchema = z.object({
  kind: z.enum(STREAM_FRAME_KINDS),
  /** 1-based sequence of credited frames per direction (0 on control frames). */
  seq: z.number().int().nonnegative().default(0),
  /** `credit`: cumulative number of credited frames the sender of this frame allows (monotonic). */
  grant: z.number().int().nonnegative().optional(),
  /** `stdout`/`stderr` of `logs`: byte offset of the payload in the combined log. */
  offset: z.number().int().nonnegative().optional(),
  /** RFC 3339 time (log chunk time, `ready`/`exit` time). */
  time: z.string().optional(),
  /** `exit`. */
  exitCode: z.number().int().optional(),
  signal: z.string().optional(),
  timedOut: z.boolean().optional(),
  /** `resize`. */
  cols: z.number().int().positive().optional(),
  rows: z.number().int().positive().optional(),
  /** `eof` of an upload, sent by the runner once the file is written. */
  totalBytes: z.number().int().nonnegative().optional(),
  /** `error`: terminal. */
  error: ApiErrorBodySchema.optional(),
});
export type StreamFrameHeader = z.infer<typeof StreamFrameHeaderSchema>;
export type StreamFrameHeaderInput = z.input<typeof StreamFrameHeaderSchema>;

export interface StreamFrame {
  header: StreamFrameHeader;
  payload: Uint8Array;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Encodes a frame as one binary message body: `[u16 big-endian header length][JSON header][raw payload]`.
 *
 * Why not base64 JSON: it inflates every byte by 4/3 and costs an encode plus a decode per chunk
 * on the hot path of 100 MiB transfers. Why not NATS headers: this keeps the protocol a pure
 * function of bytes (contracts has no NATS dependency) and the header parse is one small
 * JSON.parse either way.
 *
 * @example
 * nc.publish(subjects.streamFromRunner(r, s), encodeFrame({ kind: 'stdout', seq: 1 }, chunk));
 */
export function encodeFrame(header: StreamFrameHeaderInput, payload: Uint8Array = new Uint8Array(0)): Uint8Array {
  const head = encoder.encode(JSON.stringify(header));
  if (head.length > 0xffff) throw new Error(`stream frame header too large: ${head.length} bytes`);
  const out = new Uint8Array(2 + head.length + payload.length);
  out[0] = head.length >> 8;
  out[1] = head.length & 0xff;
  out.set(head, 2);
  out.set(payload, 2 + head.length);
  return out;
}

/**
 * Decodes {@link encodeFrame}'s output. The payload is a view into `body` (no copy).
 * Throws on a truncated body or an invalid header.
 */
export function decodeFrame(body: Uint8Array): StreamFrame {
  if (body.length < 2) throw new Error('stream frame shorter than its 2-byte header length');
  const len = ((body[0] as number) << 8) | (body[1] as number);
  if (body.length < 2 + len) throw new Error(`stream frame truncated: header says ${len} bytes, ${body.length - 2} present`);
  const header = StreamFrameHeaderSchema.parse(JSON.parse(decoder.decode(body.subarray(2, 2 + len))));
  return { header, payload: body.subarray(2 + len) };
}

export function isCreditedFrame(kind: StreamFrameKind): boolean {
  return CREDITED_FRAME_KINDS.includes(kind);
}

/**
 * Sender side of the credit window. The receiver grants a cumulative count of credited frames
 * (`credit { grant }`, monotonic, so a duplicated or reordered grant is harmless); the sender
 * never sends frame `seq` > `granted`. Memory in flight is therefore bounded by
 * `window × STREAM_CHUNK_BYTES` however slow the receiver is.
 *
 * @example
 * const w = new SendWindow(req.initialCredit);
 * if (w.canSend()) publish({ kind: 'stdout', seq: w.next() }, chunk); else await creditArrives;
 */
export class SendWindow {
  private sent = 0;
  private granted: number;
  constructor(initialGrant: number) {
    this.granted = initialGrant;
  }
  canSend(): boolean {
    return this.sent < this.granted;
  }
  /** Frames that may still be sent before the next grant. */
  available(): number {
    return this.granted - this.sent;
  }
  /** Claims the next sequence number; throws if the window is exhausted (a sender bug). */
  next(): number {
    if (!this.canSend()) throw new Error(`send window exhausted: sent ${this.sent}, granted ${this.granted}`);
    return ++this.sent;
  }
  /** Applies a cumulative grant; returns true when it opened room that was not there before. */
  grant(total: number): boolean {
    if (total <= this.granted) return false;
    const wasBlocked = !this.canSend();
    this.granted = total;
    return wasBlocked;
  }
  get sentCount(): number {
    return this.sent;
  }
}

/**
 * Receiver side: counts consumed credited frames and says when to send a new cumulative grant
 * (once half the window has been consumed, so the sender rarely stalls and grants stay few).
 * It also rejects a frame beyond the grant (a misbehaving sender) and a duplicate or gap.
 *
 * @example
 * const w = new ReceiveWindow(16);
 * const grant = w.onFrame(frame.header.seq); // after the payload was handed on
 * if (grant !== undefined) publish({ kind: 'credit', grant });
 */
export class ReceiveWindow {
  private consumed = 0;
  private granted: number;
  readonly window: number;
  constructor(window: number) {
    this.window = window;
    this.granted = window;
  }
  /** Initial cumulative grant to announce (equals the window). */
  get initialGrant(): number {
    return this.window;
  }
  /**
   * Records one credited frame as consumed. Returns the new cumulative grant to send, if any.
   * Throws when `seq` is not the next expected one or exceeds the grant.
   */
  onFrame(seq: number): number | undefined {
    if (seq !== this.consumed + 1) throw new Error(`stream frame out of order: expected seq ${this.consumed + 1}, got ${seq}`);
    if (seq > this.granted) throw new Error(`stream frame ${seq} exceeds the granted window ${this.granted}`);
    this.consumed = seq;
    if (this.granted - this.consumed <= this.window / 2) {
      this.granted = this.consumed + this.window;
      return this.granted;
    }
    return undefined;
  }
  get consumedCount(): number {
    return this.consumed;
  }
}

import { Readable, Writable } from 'node:stream';
import type { KubeConfig, V1Status } from '@kubernetes/client-node';
import { Exec } from '@kubernetes/client-node';
import type { ExecProcess, ExecRequest, ExecResult } from '../sandbox-backend';
import { CONTAINER_NAME } from './sandbox-pod';

const STDIN = 0;
const RESIZE = 4;
const CLOSE = 255;
const DEFAULT_MAX_OUTPUT = 1 << 20;
const OPEN = 1;
const CLOSED = 3;

/** The part of the `ws` WebSocket that client-node's Exec returns and we use. */
interface WebSocket {
  readonly readyState: number;
  readonly protocol: string;
  send(data: Buffer, cb?: (err?: Error) => void): void;
  close(): void;
  pause(): void;
  resume(): void;
  once(event: 'close', listener: () => void): unknown;
}

export interface PodRef {
  namespace: string;
  pod: string;
}

/** `env`/`cwd` are applied by wrapping argv in `env` and `sh -c 'cd "$1" ...'`: pods/exec has no such fields. */
export function wrapArgv(argv: string[], env?: Record<string, string>, cwd?: string): string[] {
  const withEnv = env && Object.keys(env).length > 0 ? ['env', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), ...argv] : argv;
  return cwd ? ['sh', '-c', 'cd "$1" && shift && exec "$@"', 'sh', cwd, ...withEnv] : withEnv;
}

/** Exit code carried by the exec status channel (`NonZeroExitCode` cause `ExitCode`); -1 when unknown. */
export function exitCodeOf(status: V1Status): number {
  if (status.status === 'Success') return 0;
  const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
  const code = cause?.message !== undefined ? Number(cause.message) : NaN;
  return Number.isInteger(code) ? code : -1;
}

/** Keeps the first `cap` bytes and counts all of them. */
class CappedSink extends Writable {
  readonly chunks: Buffer[] = [];
  bytes = 0;
  constructor(private readonly cap: number) {
    super();
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    const room = this.cap - Math.min(this.cap, this.bytes);
    if (room > 0) this.chunks.push(chunk.subarray(0, room));
    this.bytes += chunk.length;
    cb();
  }
  get captured(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

/** A stdin that never emits: it only makes client-node open the stdin channel; we write frames ourselves. */
const silentStdin = (): Readable => new Readable({ read: () => undefined });

function sendFrame(ws: WebSocket, channel: number, data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    if (ws.readyState !== OPEN) return reject(new Error('exec connection closed'));
    ws.send(Buffer.concat([Buffer.from([channel]), data]), (err) => (err ? reject(err) : resolve()));
  });
}

function closeStdin(ws: WebSocket): void {
  if (ws.readyState !== OPEN) return;
  if (ws.protocol === 'v5.channel.k8s.io') ws.send(Buffer.from([CLOSE, STDIN]));
}

/** Runs a command to completion: captured output with caps and true byte counts, a timeout. */
export async function execUnary(kc: KubeConfig, ref: PodRef, req: ExecRequest): Promise<ExecResult> {
  const cap = req.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  const stdout = new CappedSink(cap);
  const stderr = new CappedSink(cap);
  let status: V1Status | undefined;
  const ws = (await new Exec(kc).exec(ref.namespace, ref.pod, CONTAINER_NAME, wrapArgv(req.argv, req.env, req.cwd), stdout, stderr, silentStdin(), false, (s) => {
    status = s;
  })) as unknown as WebSocket;
  let timedOut = false;
  const closed = new Promise<void>((resolve) => {
    if (ws.readyState === CLOSED) resolve();
    ws.once('close', () => resolve());
  });
  const timer = req.timeoutMs !== undefined ? setTimeout(() => ((timedOut = true), ws.close()), req.timeoutMs) : undefined;
  try {
    if (req.stdin && req.stdin.length > 0) await sendFrame(ws, STDIN, req.stdin);
    closeStdin(ws);
    await closed;
  } finally {
    if (timer) clearTimeout(timer);
  }
  return {
    exitCode: timedOut ? -1 : status ? exitCodeOf(status) : -1,
    stdout: stdout.captured,
    stderr: stderr.captured,
    stdoutTruncated: stdout.bytes > cap,
    stderrTruncated: stderr.bytes > cap,
    stdoutBytes: stdout.bytes,
    stderrBytes: stderr.bytes,
    timedOut,
  };
}

/** A readable fed from the WebSocket that pauses the socket while the consumer is behind (backpressure). */
class SocketFedReadable extends Readable {
  private ws: WebSocket | undefined;
  constructor() {
    super({ read: () => this.ws?.resume() });
  }
  attach(ws: WebSocket): void {
    this.ws = ws;
  }
  feed(chunk: Buffer): void {
    if (!this.push(chunk)) this.ws?.pause();
  }
}

/** Interactive exec: node streams for stdin/stdout/stderr, resize over channel 4, kill = close. */
export async function execStreaming(
  kc: KubeConfig,
  ref: PodRef,
  req: { argv: string[]; env?: Record<string, string>; cwd?: string; tty?: boolean; cols?: number; rows?: number },
): Promise<ExecProcess> {
  const out = new SocketFedReadable();
  const err = new SocketFedReadable();
  const outSink = new Writable({ write: (c: Buffer, _e, cb) => (out.feed(c), cb()), final: (cb) => (out.push(null), cb()) });
  const errSink = new Writable({ write: (c: Buffer, _e, cb) => (err.feed(c), cb()), final: (cb) => (err.push(null), cb()) });
  let status: V1Status | undefined;
  const tty = req.tty ?? false;
  const ws = (await new Exec(kc).exec(ref.namespace, ref.pod, CONTAINER_NAME, wrapArgv(req.argv, req.env, req.cwd), outSink, errSink, silentStdin(), tty, (s) => {
    status = s;
  })) as unknown as WebSocket;
  out.attach(ws);
  err.attach(ws);
  const resize = (cols: number, rows: number): void => {
    void sendFrame(ws, RESIZE, Buffer.from(JSON.stringify({ Width: cols, Height: rows }))).catch(() => undefined);
  };
  if (tty && req.cols !== undefined && req.rows !== undefined) resize(req.cols, req.rows);
  const stdin = new Writable({
    // The callback waits for the frame to be handed to the socket: a slow peer slows the writer.
    write: (chunk: Buffer, _enc, cb) => void sendFrame(ws, STDIN, chunk).then(() => cb(), cb),
    final: (cb) => (closeStdin(ws), cb()),
  });
  let killedBy: NodeJS.Signals | null = null;
  const exited = new Promise<{ exitCode: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    const done = (): void => {
      if (!out.readableEnded) out.push(null);
      if (!err.readableEnded) err.push(null);
      resolve(killedBy ? { exitCode: null, signal: killedBy } : { exitCode: status ? exitCodeOf(status) : null, signal: null });
    };
    if (ws.readyState === CLOSED) done();
    else ws.once('close', done);
  });
  return {
    stdin,
    stdout: out,
    stderr: err,
    resize,
    // pods/exec has no signal channel: closing the stream makes the kubelet kill the process.
    kill: (signal: NodeJS.Signals = 'SIGKILL') => {
      if (status) return;
      killedBy = signal;
      ws.close();
    },
    exited,
  };
}

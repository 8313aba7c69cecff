import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { PaddockError } from '@paddock/contracts';
import type { ExecProcess, ExecRequest, ExecResult, ExecStreamRequest } from '../sandbox-backend';
import { connectUnix, readReply, sendLine } from './socket-io';
import { CappedOutput, execResult, KILL_REPORT_TIMEOUT_MS } from './exec-output';
import { NOT_UNARY, runUnaryExec, type UnaryExecSockets } from './unary-exec';

/**
 * Client side of the supervisor's exec protocol. Three connections per command: `ctl` (request,
 * start confirmation, kill/resize, exit status), `io` (the command's stdin and stdout: the socket
 * itself is its fd 0 and 1) and `err` (its fd 2). Data never passes through another process, so
 * backpressure is the kernel's: a consumer that stops reading stops the command.
 */
export async function startExec(
  socketPath: string,
  req: ExecStreamRequest & { env: Record<string, string> },
  onNotRunning: () => PaddockError,
  onStreams?: (io: Socket, err: Socket) => void,
): Promise<ExecProcess> {
  const id = randomUUID();
  const [ctl, io, err] = await connectThree(socketPath);
  // A supervisor that goes away between the connect and our writes makes them fail with EPIPE. That
  // error must not reach the process as an uncaught one (it would end the runner): the command's
  // fate is read from ctl's reply, and consumers of io/err still see their 'close'.
  for (const s of [ctl, io, err]) s.on('error', () => undefined);
  sendLine(ctl, { op: 'exec', role: 'ctl', id, argv: req.argv, env: req.env, cwd: req.cwd, tty: !!req.tty, cols: req.cols, rows: req.rows, ...(req.container ? { container: req.container } : {}) });
  sendLine(io, { op: 'attach', role: 'io', id });
  sendLine(err, { op: 'attach', role: 'err', id });
  // A command that fails at once closes its streams before the caller could attach to them.
  onStreams?.(io, err);
  let first;
  try {
    first = await readReply(ctl);
  } catch (e) {
    for (const s of [ctl, io, err]) s.destroy();
    throw supervisorGone(e);
  }
  if (first.ok === false) {
    for (const s of [ctl, io, err]) s.destroy();
    if (first.errno === 'ENOTRUNNING') throw onNotRunning();
    if (first.errno === 'ENOCONTAINER') {
      throw new PaddockError('failed_precondition', String(first.message), {
        reason: 'CWSANDBOX_INVALID_REQUEST',
        violations: [{ field: 'container', rule: 'running', description: 'a running container of the sandbox' }],
      });
    }
    throw new PaddockError('internal', `exec failed inside the sandbox: ${first.message ?? 'unknown error'}`, {
      reason: 'CWSANDBOX_INTERNAL',
    });
  }
  const exited = new Promise<{ exitCode: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    const settle = (reply: Record<string, unknown>): void => {
      resolve({
        exitCode: typeof reply.exit === 'number' ? reply.exit : null,
        signal: typeof reply.signal === 'string' ? (reply.signal as NodeJS.Signals) : null,
      });
      ctl.destroy();
    };
    if ('exit' in first) {
      settle(first);
      return;
    }
    readReply(ctl).then(settle, () => resolve({ exitCode: null, signal: 'SIGKILL' }));
  });
  // Keep the runner alive only through the consumer's own handles.
  ctl.on('error', () => undefined);
  return {
    stdin: io,
    stdout: io,
    stderr: err,
    resize(cols: number, rows: number) {
      if (!ctl.destroyed) sendLine(ctl, { resize: [cols, rows] });
    },
    kill(signal: NodeJS.Signals = 'SIGTERM') {
      if (ctl.destroyed) return;
      sendLine(ctl, { kill: signal });
      // The exec daemon lives in the sandbox and may be frozen by the workload: a kill that gets no
      // exit status in time ends the exec on our side anyway (destroying ctl settles 'exited').
      if (signal === 'SIGKILL') setTimeout(() => ctl.destroy(), KILL_REPORT_TIMEOUT_MS).unref();
    },
    exited,
  };
}

/**
 * The first reply never came: the supervisor closed or reset the connection, which only happens
 * when it is going away with its sandbox. The error keeps (or gets) a socket errno so the service
 * answers with the sandbox's state instead of an internal socket error.
 */
function supervisorGone(e: unknown): Error {
  const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  if (typeof code === 'string') return e as Error;
  return Object.assign(new Error(`the sandbox supervisor went away: ${(e as Error).message}`), { code: 'ECONNRESET' });
}

/** Collects a stream up to `cap` bytes while counting everything it produced. */
function capture(stream: Socket, cap: number): Promise<CappedOutput> {
  return new Promise((resolve) => {
    const output = new CappedOutput(cap);
    stream.on('data', (chunk: Buffer) => output.add(chunk));
    const done = (): void => resolve(output);
    stream.once('end', done);
    stream.once('close', done);
    stream.once('error', () => undefined);
  });
}

export const DEFAULT_MAX_OUTPUT_BYTES = 10 * 1024 * 1024;

/** The three connections of an exec, or none: one that failed does not leave the others open. */
async function connectThree(socketPath: string): Promise<[Socket, Socket, Socket]> {
  const settled = await Promise.allSettled([connectUnix(socketPath), connectUnix(socketPath), connectUnix(socketPath)]);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    for (const r of settled) if (r.status === 'fulfilled') r.value.destroy();
    throw failed.reason;
  }
  const [ctl, io, err] = settled.map((r) => (r as PromiseFulfilledResult<Socket>).value);
  return [ctl as Socket, io as Socket, err as Socket];
}

/** Unary exec on top of the streaming one: stdin written whole, outputs captured with caps, timeout kills the tree. */
export async function runExec(
  sockets: UnaryExecSockets,
  req: ExecRequest & { env: Record<string, string> },
  onNotRunning: () => PaddockError,
): Promise<ExecResult> {
  const cap = req.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  // Without stdin, on one connection (unary-exec.ts); a command the exec daemon does not run
  // comes back refused and goes the three-connection way below.
  if (!(req.stdin && req.stdin.length > 0)) {
    const result = await runUnaryExec(sockets, { ...req, maxOutputBytes: cap }, onNotRunning);
    if (result !== NOT_UNARY) return result;
  }
  let out!: ReturnType<typeof capture>;
  let errOut!: ReturnType<typeof capture>;
  const proc = await startExec(sockets.supervisor, { argv: req.argv, env: req.env, ...(req.cwd ? { cwd: req.cwd } : {}), ...(req.container ? { container: req.container } : {}) }, onNotRunning, (io, err) => {
    io.on('error', () => undefined);
    out = capture(io, cap);
    errOut = capture(err, cap);
    if (req.stdin && req.stdin.length > 0) io.end(req.stdin);
    else io.end();
  });
  const io = proc.stdout as Socket;
  const err = proc.stderr as Socket;
  let timedOut = false;
  const timer =
    req.timeoutMs && req.timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          proc.kill('SIGKILL');
        }, req.timeoutMs)
      : undefined;
  const status = await proc.exited;
  if (timer) clearTimeout(timer);
  // A background process may keep the pipes open after the command exits: give it a moment, then cut.
  const cut = setTimeout(() => {
    io.destroy();
    err.destroy();
  }, 1000);
  const [o, e] = await Promise.all([out, errOut]);
  clearTimeout(cut);
  return execResult(status, o, e, timedOut);
}

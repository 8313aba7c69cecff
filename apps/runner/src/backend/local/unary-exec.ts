import type { Socket } from 'node:net';
import { PaddockError } from '@paddock/contracts';
import type { ExecRequest, ExecResult } from '../sandbox-backend';
import { CappedOutput, execResult, KILL_REPORT_TIMEOUT_MS } from './exec-output';
import { connectUnix, sendLine, type SupervisorReply } from './socket-io';

/**
 * Client side of a unary exec on one connection (`op: run`, served by the sandbox's exec daemon:
 * `ExecDaemon.run_unary` in `supervisor/paddock_supervisor/execd.py`). The three-connection
 * protocol (exec-client.ts) gives the command the sockets themselves as its stdio; for a command
 * without stdin whose output is wanted whole, that cost a third of the runner's CPU per exec in
 * three connects (and three accepts in the supervisor). Here the daemon holds the command's stdio
 * and relays its output on the one connection as frames: a kind byte, a 4-byte big-endian length,
 * that many bytes. `o` is stdout, `e` stderr, and `x`, last, the exit status as JSON, sent once
 * the command has exited and its streams have closed (or a second after its exit, when a
 * background process it left keeps them open).
 *
 * The supervisor may answer instead with a JSON line (its replies begin with `{`, which no frame
 * does): ENOTRUNNING, or EUNARY when the command is not one the daemon runs (a sidecar's, or no
 * daemon): the caller then sends it the three-connection way. The daemon's own socket answers
 * EUNARY for anything but such a command, and the supervisor is asked instead.
 */
export const NOT_UNARY = Symbol('not served on one connection');

const FRAME_HEADER_BYTES = 5;
/** The daemon relays pieces of at most 256 KiB (RELAY_CHUNK); a bigger frame is not one of its. */
const MAX_FRAME_BYTES = 1 << 20;
/** The longest request line the exec daemon's socket reads (MAX_REQUEST_LINE in the supervisor's sysutil.py); longer ones go to the supervisor. */
const MAX_DAEMON_REQUEST_BYTES = 64 * 1024;
/** The supervisor's refusals are small JSON lines. */
const MAX_LINE_BYTES = 64 * 1024;
const OPEN_BRACE = 0x7b;
const KIND_STDOUT = 0x6f; // o
const KIND_STDERR = 0x65; // e
const KIND_END = 0x78; // x

/**
 * Where a unary exec may go: the supervisor's socket, and the exec daemon's own (`exec.sock`,
 * `ExecDaemonSocket` in the supervisor), which skips the supervisor for a command of the primary
 * container. The daemon's is tried first; it is missing while the daemon is not running, the
 * sandbox paused or stopped, and refused once the daemon is gone: the request then goes to the
 * supervisor, which answers as it always did (and starts a daemon again).
 */
export interface UnaryExecSockets {
  supervisor: string;
  daemon?: string;
}

type UnaryExecRequest = ExecRequest & { env: Record<string, string>; maxOutputBytes: number };

export async function runUnaryExec(
  sockets: UnaryExecSockets,
  req: UnaryExecRequest,
  onNotRunning: () => PaddockError,
): Promise<ExecResult | typeof NOT_UNARY> {
  const line = `${JSON.stringify({
    op: 'run',
    argv: req.argv,
    env: req.env,
    ...(req.cwd ? { cwd: req.cwd } : {}),
    ...(req.container ? { container: req.container } : {}),
  })}\n`;
  if (sockets.daemon !== undefined && !req.container && Buffer.byteLength(line) <= MAX_DAEMON_REQUEST_BYTES) {
    // Refused before anything ran (EUNARY: a request the daemon's socket does not take) or not
    // connected at all: nothing has happened yet, so the supervisor is asked instead.
    // A daemon with a full backlog (a burst on this sandbox) is not waited for: the supervisor is.
    const direct = await connectUnix(sockets.daemon, { busyWaitMs: 0 }).catch(() => undefined);
    if (direct !== undefined) {
      const result = await runOn(direct, line, req, onNotRunning);
      if (result !== NOT_UNARY) return result;
    }
  }
  return runOn(await connectUnix(sockets.supervisor), line, req, onNotRunning);
}

async function runOn(ctl: Socket, line: string, req: UnaryExecRequest, onNotRunning: () => PaddockError): Promise<ExecResult | typeof NOT_UNARY> {
  ctl.on('error', () => undefined);
  ctl.write(line);
  let timedOut = false;
  const timer =
    req.timeoutMs && req.timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          sendLine(ctl, { kill: 'SIGKILL' });
          setTimeout(() => ctl.destroy(), KILL_REPORT_TIMEOUT_MS).unref();
        }, req.timeoutMs)
      : undefined;
  try {
    const reply = await readUnaryReply(ctl, req.maxOutputBytes);
    if ('refusal' in reply) return refusalOf(reply.refusal, onNotRunning);
    return execResult(reply.end, reply.out, reply.err, timedOut);
  } finally {
    if (timer) clearTimeout(timer);
    // Ended (the daemon closes after its end frame), refused, or given up on: a command still
    // running when its caller's connection goes is killed by the daemon.
    ctl.destroy();
  }
}

type UnaryReply =
  | { refusal: SupervisorReply }
  | { out: CappedOutput; err: CappedOutput; end: { exitCode: number | null; signal: string | null } };

/** Reads the connection to its end: the supervisor's refusal, or the daemon's frames. */
function readUnaryReply(ctl: Socket, cap: number): Promise<UnaryReply> {
  return new Promise((resolve, reject) => {
    const out = new CappedOutput(cap);
    const err = new CappedOutput(cap);
    let settled = false;
    const finish = (r: UnaryReply | Error): void => {
      if (settled) return;
      settled = true;
      ctl.off('data', onData);
      if (r instanceof Error) reject(r);
      else resolve(r);
    };
    // Frames are parsed as they stream: output bytes go to their CappedOutput as views of the
    // chunks they came in (nothing is copied, and what is past the cap is only counted).
    let framed = false;
    let line: Buffer = Buffer.alloc(0);
    let head: Buffer = Buffer.alloc(0);
    let kind = -1;
    let left = 0;
    const endParts: Buffer[] = [];
    const onRefusalLine = (chunk: Buffer): void => {
      line = line.length === 0 ? chunk : Buffer.concat([line, chunk]);
      const nl = line.indexOf(10);
      if (nl < 0) {
        if (line.length > MAX_LINE_BYTES) finish(malformed('a reply line over 64 KiB'));
        return;
      }
      let reply: unknown;
      try {
        reply = JSON.parse(line.subarray(0, nl).toString('utf8'));
      } catch {
        finish(malformed('a reply line that is not JSON'));
        return;
      }
      finish({ refusal: (typeof reply === 'object' && reply !== null ? reply : {}) as SupervisorReply });
    };
    const onData = (chunk: Buffer): void => {
      if (!framed && (line.length > 0 || chunk[0] === OPEN_BRACE)) return onRefusalLine(chunk);
      framed = true;
      let i = 0;
      while (i < chunk.length) {
        if (kind < 0) {
          const take = chunk.subarray(i, i + FRAME_HEADER_BYTES - head.length);
          head = head.length === 0 ? take : Buffer.concat([head, take]);
          i += take.length;
          if (head.length < FRAME_HEADER_BYTES) return;
          kind = head[0] as number;
          left = head.readUInt32BE(1);
          head = Buffer.alloc(0);
          if (kind !== KIND_STDOUT && kind !== KIND_STDERR && kind !== KIND_END) return finish(malformed(`a frame of kind ${kind}`));
          if (left > MAX_FRAME_BYTES) return finish(malformed(`a frame of ${left} bytes`));
        }
        const piece = chunk.subarray(i, i + left);
        i += piece.length;
        left -= piece.length;
        if (kind === KIND_STDOUT) out.add(piece);
        else if (kind === KIND_STDERR) err.add(piece);
        else endParts.push(piece);
        if (left === 0) {
          if (kind === KIND_END) return finish(endFrame(Buffer.concat(endParts), out, err));
          kind = -1;
        }
      }
    };
    const onClose = (): void => {
      // Nothing at all: the supervisor went away with its sandbox (the caller answers with the
      // sandbox's state). Frames but no end: the exec was cut on our side after its kill.
      if (!framed) finish(Object.assign(new Error('the sandbox supervisor went away'), { code: 'ECONNRESET' }));
      else finish({ out, err, end: { exitCode: null, signal: 'SIGKILL' } });
    };
    ctl.on('data', onData);
    ctl.once('close', onClose);
  });
}

/** The `x` frame: untrusted (the daemon runs as the sandbox), so each field is checked. */
function endFrame(data: Buffer, out: CappedOutput, err: CappedOutput): UnaryReply | Error {
  let v: unknown;
  try {
    v = JSON.parse(data.toString('utf8'));
  } catch {
    return malformed('an end frame that is not JSON');
  }
  const o = (typeof v === 'object' && v !== null ? v : {}) as { exit?: unknown; signal?: unknown };
  const exitCode = typeof o.exit === 'number' && Number.isInteger(o.exit) ? o.exit : null;
  const signal = typeof o.signal === 'string' ? o.signal : null;
  if (exitCode === null && signal === null) return malformed('an end frame without an exit code or a signal');
  return { out, err, end: { exitCode, signal } };
}

function refusalOf(reply: SupervisorReply, onNotRunning: () => PaddockError): typeof NOT_UNARY {
  if (reply.errno === 'EUNARY') return NOT_UNARY;
  if (reply.errno === 'ENOTRUNNING') throw onNotRunning();
  throw new PaddockError('internal', `exec failed inside the sandbox: ${reply.message ?? 'unknown error'}`, {
    reason: 'CWSANDBOX_INTERNAL',
  });
}

function malformed(what: string): PaddockError {
  return new PaddockError('internal', `exec failed inside the sandbox: its exec daemon sent ${what}`, {
    reason: 'CWSANDBOX_INTERNAL',
  });
}

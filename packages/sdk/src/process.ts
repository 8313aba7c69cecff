import WebSocket from 'ws';
import { AsyncChannel } from './channel';
import type { PaddockClient } from './client';
import { PaddockError, SandboxCommandTimeoutError, SandboxExecutionError, SandboxProtocolError, errorFromBody, isErrorBody } from './errors';
import type { ExecResult } from './types';

export interface ExecOptions {
  /** Absolute working directory inside the sandbox. */
  cwd?: string;
  env?: Record<string, string>;
  /** Kills the command after this long (the wait for RUNNING is not counted). */
  timeoutSeconds?: number;
  /** Throw `SandboxExecutionError` on a non-zero exit code. */
  check?: boolean;
  /** Keep stdin open for `process.stdin.write()`; otherwise it is closed at once. */
  stdin?: boolean;
  tty?: boolean;
  cols?: number;
  rows?: number;
  /** The container to run in (a sandbox with several); default the primary. */
  container?: string;
}

const CHANNEL_STDOUT = 1;
const CHANNEL_STDERR = 2;
const STDIN_CHUNK = 64 * 1024;

/** Writes to the command's stdin; `close()` half-closes it (the command sees EOF). */
export interface StdinWriter {
  write(data: string | Uint8Array): Promise<void>;
  close(): Promise<void>;
}

/**
 * A running command. `stdout`/`stderr` yield live chunks (each can be iterated once); `result()`
 * resolves at exit with the whole output.
 */
export class ExecProcess {
  readonly stdout = new AsyncChannel<Buffer>();
  readonly stderr = new AsyncChannel<Buffer>();
  readonly stdin: StdinWriter;
  private readonly out: Buffer[] = [];
  private readonly err: Buffer[] = [];
  private socket: WebSocket | null = null;
  private readonly opened: Promise<WebSocket>;
  private readonly done: Promise<ExecResult>;

  constructor(
    client: PaddockClient,
    sandboxId: string,
    readonly command: string[],
    private readonly opts: ExecOptions,
    beforeOpen: () => Promise<void>,
  ) {
    let resolveDone!: (r: ExecResult) => void;
    let rejectDone!: (e: unknown) => void;
    this.done = new Promise<ExecResult>((res, rej) => {
      resolveDone = res;
      rejectDone = rej;
    });
    // Never an unhandled rejection: callers observe failures through result().
    this.done.catch(() => undefined);
    const fail = (e: unknown): void => {
      this.stdout.end(e);
      this.stderr.end(e);
      rejectDone(e);
    };
    this.opened = (async () => {
      await beforeOpen();
      const url = client.url(`/v1/sandboxes/${encodeURIComponent(sandboxId)}/exec/stream`).replace(/^http/, 'ws');
      const socket = new WebSocket(url, { headers: client.headers(), perMessageDeflate: false });
      this.socket = socket;
      await new Promise<void>((resolve, reject) => {
        socket.once('open', () => resolve());
        socket.once('error', reject);
        socket.once('unexpected-response', (_req, res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            let body: unknown;
            try {
              body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            } catch {
              body = undefined;
            }
            reject(isErrorBody(body) ? errorFromBody(body, res.statusCode) : new PaddockError('unavailable', `exec stream refused: HTTP ${res.statusCode}`));
          });
        });
      });
      socket.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
        const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
        if (isBinary) {
          const chunk = buf.subarray(1);
          if (buf[0] === CHANNEL_STDOUT) {
            this.out.push(chunk);
            this.stdout.push(chunk);
          } else if (buf[0] === CHANNEL_STDERR) {
            this.err.push(chunk);
            this.stderr.push(chunk);
          }
          return;
        }
        const msg = JSON.parse(buf.toString('utf8')) as { type: string; exitCode?: number; timedOut?: boolean } & Record<string, unknown>;
        if (msg.type === 'exit') {
          this.stdout.end();
          this.stderr.end();
          const stdout = Buffer.concat(this.out);
          const stderr = Buffer.concat(this.err);
          resolveDone({
            command: this.command,
            exitCode: msg.exitCode ?? -1,
            stdout,
            stderr,
            stdoutText: stdout.toString('utf8'),
            stderrText: stderr.toString('utf8'),
            timedOut: msg.timedOut ?? false,
          });
        } else if (msg.type === 'error') {
          fail(isErrorBody(msg) ? errorFromBody(msg) : new SandboxProtocolError('internal', 'malformed error frame'));
        }
      });
      socket.on('close', () => fail(new SandboxProtocolError('unavailable', 'exec stream closed before the command exited')));
      socket.on('error', (e) => fail(e));
      socket.send(
        JSON.stringify({
          type: 'init',
          argv: command,
          env: opts.env ?? {},
          ...(opts.cwd ? { cwd: opts.cwd } : {}),
          tty: opts.tty ?? false,
          ...(opts.cols ? { cols: opts.cols } : {}),
          ...(opts.rows ? { rows: opts.rows } : {}),
          ...(opts.timeoutSeconds ? { timeoutSeconds: opts.timeoutSeconds } : {}),
          ...(opts.container ? { container: opts.container } : {}),
        }),
      );
      if (!opts.stdin) socket.send(JSON.stringify({ type: 'close' }));
      return socket;
    })();
    this.opened.catch(fail);
    const send = async (data: string | Buffer): Promise<void> => {
      const s = await this.opened;
      await new Promise<void>((resolve, reject) => s.send(data, (e) => (e ? reject(e) : resolve())));
    };
    this.stdin = {
      write: async (data) => {
        const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data);
        for (let off = 0; off < buf.length; off += STDIN_CHUNK) await send(buf.subarray(off, off + STDIN_CHUNK));
      },
      close: () => send(JSON.stringify({ type: 'close' })),
    };
  }

  /** Resolves at exit. Applies `check` and `timeoutSeconds` semantics. */
  async result(): Promise<ExecResult> {
    const r = await this.done;
    this.socket?.close();
    if (r.timedOut) {
      throw new SandboxCommandTimeoutError('deadline_exceeded', `command timed out after ${this.opts.timeoutSeconds ?? '?'} s`, {
        reason: 'CWSANDBOX_COMMAND_TIMEOUT',
      });
    }
    if (this.opts.check && r.exitCode !== 0) throw new SandboxExecutionError(r);
    return r;
  }

  /** Sends a terminal resize (tty mode). */
  async resize(cols: number, rows: number): Promise<void> {
    const s = await this.opened;
    s.send(JSON.stringify({ type: 'resize', cols, rows }));
  }

  /** Asks the runner to kill the command. */
  async kill(): Promise<void> {
    const s = await this.opened;
    s.send(JSON.stringify({ type: 'cancel' }));
  }
}

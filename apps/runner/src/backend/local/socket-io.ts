import { closeSync, openSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { connect, type Socket } from 'node:net';

/** sockaddr_un holds 108 bytes; deeper state directories are reached through a directory fd. */
const MAX_UNIX_PATH = 100;
/** How long a connect waits for room in a listener's backlog (a burst of calls on one sandbox). */
const BUSY_WAIT_MS = 5_000;

export interface ConnectOptions {
  /**
   * A listener whose backlog is full (EAGAIN: every place taken by connections it has not
   * accepted yet, as in a burst of execs on one sandbox) is tried again, backing off, for this
   * long before the EAGAIN is the answer. 0: at once.
   */
  busyWaitMs?: number;
}

/**
 * Connects to a Unix socket; rejects with the errno error (ENOENT, ECONNREFUSED...) if nobody
 * listens. A path longer than sockaddr_un allows is reached through `/proc/self/fd/<dirfd>/<name>`:
 * Linux resolves the magic link to the directory, so the socket stays where it is (with its
 * permissions) while the address stays short. The supervisor binds the same way
 * (`apps/runner/supervisor/supervisor.py`).
 */
export async function connectUnix(path: string, opts: ConnectOptions = {}): Promise<Socket> {
  const deadline = Date.now() + (opts.busyWaitMs ?? BUSY_WAIT_MS);
  for (let backoffMs = 1; ; backoffMs = Math.min(backoffMs * 2, 50)) {
    try {
      return await connectOnce(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN' || Date.now() + backoffMs > deadline) throw e;
      await new Promise((r) => setTimeout(r, backoffMs));
    }
  }
}

function connectOnce(path: string): Promise<Socket> {
  let dirFd: number | undefined;
  let address = path;
  if (Buffer.byteLength(path) > MAX_UNIX_PATH) {
    dirFd = openSync(dirname(path), 'r');
    address = `/proc/self/fd/${dirFd}/${basename(path)}`;
  }
  const release = (): void => {
    if (dirFd !== undefined) closeSync(dirFd);
    dirFd = undefined;
  };
  return new Promise((resolve, reject) => {
    const sock = connect(address);
    const onError = (e: Error): void => {
      release();
      sock.destroy();
      reject(e);
    };
    sock.once('error', onError);
    sock.once('connect', () => {
      release();
      sock.off('error', onError);
      resolve(sock);
    });
  });
}

export function sendLine(sock: Socket, obj: unknown): void {
  sock.write(`${JSON.stringify(obj)}\n`);
}

/**
 * Replies are small JSON lines. The exec daemon that writes some of them runs inside the sandbox,
 * so a reply is bounded like any other untrusted input.
 */
const MAX_LINE_BYTES = 64 * 1024;

/**
 * Reads one newline-terminated line without consuming anything after it: the rest is pushed back
 * (`unshift`) so the socket can then be handed to a consumer as a raw byte stream.
 */
export function readLine(sock: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const cleanup = (): void => {
      sock.off('readable', onReadable);
      sock.off('end', onEnd);
      sock.off('close', onEnd);
      sock.off('error', onError);
    };
    const onReadable = (): void => {
      for (;;) {
        const chunk = sock.read() as Buffer | null;
        if (chunk === null) return;
        const nl = chunk.indexOf(10);
        if (nl >= 0) {
          cleanup();
          const rest = chunk.subarray(nl + 1);
          if (rest.length > 0) sock.unshift(rest);
          resolve(Buffer.concat([buf, chunk.subarray(0, nl)]).toString('utf8'));
          return;
        }
        buf = Buffer.concat([buf, chunk]);
        if (buf.length > MAX_LINE_BYTES) {
          cleanup();
          reject(new Error(`the sandbox sent a reply line over ${MAX_LINE_BYTES} bytes`));
          return;
        }
      }
    };
    const onEnd = (): void => {
      cleanup();
      reject(new Error('the sandbox supervisor closed the connection before replying'));
    };
    const onError = (e: Error): void => {
      cleanup();
      reject(e);
    };
    sock.on('readable', onReadable);
    sock.once('end', onEnd);
    sock.once('close', onEnd);
    sock.once('error', onError);
    onReadable();
  });
}

export interface SupervisorReply {
  ok?: boolean;
  errno?: string;
  message?: string;
  [k: string]: unknown;
}

export async function readReply(sock: Socket): Promise<SupervisorReply> {
  return JSON.parse(await readLine(sock)) as SupervisorReply;
}

/** One request/one reply (stop, ping). */
export async function request(path: string, body: Record<string, unknown>): Promise<SupervisorReply> {
  const sock = await connectUnix(path);
  try {
    sendLine(sock, body);
    return await readReply(sock);
  } finally {
    sock.destroy();
  }
}

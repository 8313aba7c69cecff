import type { Agent as HttpAgent } from 'node:http';
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { TLSSocket } from 'node:tls';

/** Thrown instead of writing when this instance is no longer the leader. */
export class NotLeaderError extends Error {
  constructor() {
    super('not the leader any more: write refused');
  }
}

/**
 * A connection that asks the fence before every chunk it sends. It stands between the HTTP
 * client and the real socket (an agent's `createConnection` may return any Duplex), and forwards
 * a chunk only once the socket is connected (TLS: once the handshake is done, so nothing waits in
 * a TLS buffer), checking `mayWrite()` in the same synchronous step as the socket write: a leader
 * frozen (SIGSTOP, a GC pause) anywhere before that step finds the fence closed when it resumes,
 * and the request dies unsent. Only public stream and socket APIs are used.
 */
export class FencedConnection extends Duplex {
  private connected: Promise<void>;

  constructor(
    private readonly socket: Socket,
    private readonly mayWrite: () => boolean,
  ) {
    super();
    // A new TLS socket is never secure yet; a plain one may already be connected.
    const ready = socket instanceof TLSSocket ? 'secureConnect' : socket.connecting ? 'connect' : undefined;
    this.connected = ready ? new Promise((resolve) => socket.once(ready, () => resolve())) : Promise.resolve();
    socket.on('data', (chunk: Buffer) => {
      if (!this.push(chunk)) socket.pause();
    });
    socket.once('end', () => this.push(null));
    socket.once('error', (e) => this.destroy(e));
    socket.once('close', () => this.destroy());
    socket.on('timeout', () => this.emit('timeout'));
  }

  override _read(): void {
    this.socket.resume();
  }

  override _write(chunk: Buffer, encoding: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.connected.then(
      () => {
        if (!this.mayWrite()) {
          const refused = new NotLeaderError();
          this.socket.destroy(refused);
          cb(refused);
          return;
        }
        this.socket.write(chunk, encoding, cb);
      },
      (e: unknown) => cb(e instanceof Error ? e : new Error(String(e))),
    );
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.socket.end(cb);
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.socket.destroy(err ?? undefined);
    cb(err);
  }

  // The HTTP client tunes its connection through these; they go to the real socket.
  setNoDelay(noDelay?: boolean): this {
    this.socket.setNoDelay(noDelay);
    return this;
  }

  setKeepAlive(enable?: boolean, initialDelay?: number): this {
    this.socket.setKeepAlive(enable, initialDelay);
    return this;
  }

  setTimeout(ms: number, cb?: () => void): this {
    if (cb) this.once('timeout', cb);
    this.socket.setTimeout(ms);
    return this;
  }

  ref(): this {
    this.socket.ref();
    return this;
  }

  unref(): this {
    this.socket.unref();
    return this;
  }
}

/** The request's agent (one per request in client-node 1.x), with every connection it opens fenced. */
export function fenceAgent(agent: HttpAgent, mayWrite: () => boolean): HttpAgent {
  const a = agent as unknown as { createConnection: (...args: unknown[]) => Socket };
  const create = a.createConnection.bind(agent);
  a.createConnection = (...args: unknown[]) => new FencedConnection(create(...args), mayWrite) as unknown as Socket;
  return agent;
}

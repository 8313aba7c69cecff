import { connect, type Socket } from 'node:net';

/** A JSON reply: the status and the parsed body (undefined when the body is empty). */
export interface JsonReply {
  status: number;
  json: unknown;
}

const HEAD_END = Buffer.from('\r\n\r\n');

/**
 * A minimal HTTP/1.1 keep-alive client, the way a load generator (wrk, ab) is one: the request is
 * one preformatted write, the reply is read by its Content-Length (or chunks), and a connection
 * carries one request at a time. The benches run it on the same two CPUs as the platform, so what
 * the client spends is taken from the platform's figures: node:http costs ~270 µs of CPU per JSON
 * request on this VM, this ~100 µs. Connections are plain TCP to 127.0.0.1 (no TLS, no proxy).
 */
export class RawHttpClient {
  private readonly idle = new Map<string, Socket[]>();
  private readonly open = new Set<Socket>();

  async request(
    method: string,
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<JsonReply> {
    const u = new URL(url);
    const socket = await this.connection(u.hostname, Number(u.port || 80));
    const payload = body === undefined ? '' : JSON.stringify(body);
    let head = `${method} ${u.pathname}${u.search} HTTP/1.1\r\nhost: ${u.host}\r\n`;
    for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
    if (body !== undefined) {
      head += `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(payload)}\r\n`;
    }
    const reply = readReply(socket);
    socket.write(`${head}\r\n${payload}`);
    const { status, text, keepAlive } = await reply;
    if (keepAlive) this.release(socket);
    else socket.destroy();
    return { status, json: text ? (JSON.parse(text) as unknown) : undefined };
  }

  close(): void {
    for (const s of this.open) s.destroy();
    this.idle.clear();
  }

  private connection(host: string, port: number): Promise<Socket> {
    const key = `${host}:${port}`;
    const reused = this.idle.get(key)?.pop();
    if (reused) return Promise.resolve(reused);
    return new Promise((resolve, reject) => {
      const s = connect({ host, port, noDelay: true });
      s.once('error', reject);
      s.once('connect', () => {
        s.removeListener('error', reject);
        resolve(s);
      });
      this.open.add(s);
      s.once('close', () => {
        this.open.delete(s);
        const list = this.idle.get(key);
        const i = list?.indexOf(s) ?? -1;
        if (list && i >= 0) list.splice(i, 1);
      });
      // An idle connection the server closes must not throw while nobody reads it.
      s.on('error', () => undefined);
      (s as Socket & { poolKey?: string }).poolKey = key;
    });
  }

  private release(s: Socket): void {
    const key = (s as Socket & { poolKey?: string }).poolKey ?? '';
    const list = this.idle.get(key);
    if (list) list.push(s);
    else this.idle.set(key, [s]);
  }
}

interface RawReply {
  status: number;
  text: string;
  keepAlive: boolean;
}

/** Reads one reply off `s`: its head, then a Content-Length body or a chunked one. */
function readReply(s: Socket): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    let buf: Buffer = Buffer.alloc(0);
    let head: { status: number; bodyAt: number; length: number | 'chunked'; keepAlive: boolean } | undefined;
    const finish = (outcome: RawReply | Error): void => {
      s.removeListener('data', onData);
      s.removeListener('close', onClose);
      if (outcome instanceof Error) {
        s.destroy();
        reject(outcome);
      } else resolve(outcome);
    };
    const onClose = (): void => finish(new Error('the server closed the connection before its reply'));
    const onData = (chunk: Buffer): void => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      if (!head) {
        const end = buf.indexOf(HEAD_END);
        if (end < 0) return;
        head = parseHead(buf.toString('latin1', 0, end), end + HEAD_END.length);
      }
      const body =
        head.length === 'chunked' ? dechunk(buf, head.bodyAt) : buf.length - head.bodyAt >= head.length ? buf.subarray(head.bodyAt, head.bodyAt + head.length) : undefined;
      if (body) finish({ status: head.status, text: body.toString('utf8'), keepAlive: head.keepAlive });
    };
    s.on('data', onData);
    s.once('close', onClose);
  });
}

function parseHead(text: string, bodyAt: number): { status: number; bodyAt: number; length: number | 'chunked'; keepAlive: boolean } {
  const status = Number(text.slice(9, 12));
  const lower = text.toLowerCase();
  const keepAlive = !/\r\nconnection: *close/.test(lower);
  if (/\r\ntransfer-encoding: *chunked/.test(lower)) return { status, bodyAt, length: 'chunked', keepAlive };
  const m = /\r\ncontent-length: *(\d+)/.exec(lower);
  return { status, bodyAt, length: m ? Number(m[1]) : 0, keepAlive };
}

/** The body of a complete chunked reply from `at`, or undefined while its last chunk is still to come. */
function dechunk(buf: Buffer, at: number): Buffer | undefined {
  const parts: Buffer[] = [];
  let i = at;
  for (;;) {
    const eol = buf.indexOf('\r\n', i);
    if (eol < 0) return undefined;
    const size = parseInt(buf.toString('latin1', i, eol), 16);
    if (size === 0) return buf.indexOf('\r\n', eol + 2) < 0 ? undefined : Buffer.concat(parts);
    if (buf.length < eol + 2 + size + 2) return undefined;
    parts.push(buf.subarray(eol + 2, eol + 2 + size));
    i = eol + 2 + size + 2;
  }
}

import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProxiedWrite {
  at: number;
  method: string;
  path: string;
  status: number;
}

/**
 * An HTTP proxy in front of the Kubernetes API test server, one per controller instance: the
 * "write counter keyed by holder" that proves a deposed leader writes nothing (both instances use the same field manager,
 * so the server's per-manager counter cannot tell them apart).
 */
export class CountingProxy {
  readonly writes: ProxiedWrite[] = [];
  private server: Server | undefined;
  url = '';

  constructor(private readonly target: string) {}

  async start(): Promise<this> {
    const t = new URL(this.target);
    this.server = createServer((req, res) => {
      const method = req.method ?? 'GET';
      const path = req.url ?? '/';
      const up = request({ host: t.hostname, port: t.port, method, path, headers: req.headers }, (ur) => {
        const status = ur.statusCode ?? 0;
        if (method !== 'GET') this.writes.push({ at: Date.now(), method, path, status });
        res.writeHead(status, ur.headers);
        ur.pipe(res);
      });
      up.on('error', () => res.destroy());
      req.pipe(up);
    });
    await new Promise<void>((r) => this.server?.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Accepted (2xx) writes to anything but the Lease, after `since`. */
  acceptedObjectWrites(since = 0): ProxiedWrite[] {
    return this.writes.filter((w) => w.at >= since && w.status < 300 && !w.path.includes('/leases'));
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => this.server?.close(() => r()) ?? r());
  }
}

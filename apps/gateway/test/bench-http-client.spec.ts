import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { RawHttpClient } from '../bench/raw-http-client';

/** The benches' HTTP client against a real node:http server: what it sends and how it reads replies. */
describe('bench HTTP client', () => {
  let server: Server;
  let base = '';
  const sockets = new Set<Socket>();
  const client = new RawHttpClient();

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const echo = {
          method: req.method,
          url: req.url,
          auth: req.headers.authorization ?? null,
          type: req.headers['content-type'] ?? null,
          body: chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown) : null,
        };
        if (req.url === '/chunked') {
          res.writeHead(201, { 'content-type': 'application/json' });
          const text = JSON.stringify(echo);
          res.write(text.slice(0, 5));
          setTimeout(() => res.end(text.slice(5)), 20);
        } else if (req.url === '/close') {
          res.writeHead(200, { connection: 'close', 'content-type': 'application/json' });
          res.end(JSON.stringify(echo));
        } else if (req.url === '/empty') {
          res.writeHead(204);
          res.end();
        } else if (req.url === '/cut') {
          res.writeHead(200, { 'content-length': '100' });
          res.write('{"partial":');
          setTimeout(() => req.socket.destroy(), 20);
        } else {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(JSON.stringify(echo));
        }
      });
    });
    server.on('connection', (s) => sockets.add(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    client.close();
    await new Promise((r) => server.close(r));
  });

  it('sends the method, path, query, headers and JSON body, and parses any status with its JSON', async () => {
    const r = await client.request('POST', `${base}/x?y=1`, { a: [1, 'é'] }, { authorization: 'Bearer t' });
    expect(r).toEqual({
      status: 404,
      json: { method: 'POST', url: '/x?y=1', auth: 'Bearer t', type: 'application/json', body: { a: [1, 'é'] } },
    });
  });

  it('keeps one connection for requests one after the other, and opens more only for concurrent ones', async () => {
    const before = sockets.size;
    for (let i = 0; i < 5; i++) expect((await client.request('GET', `${base}/a`)).status).toBe(404);
    expect(sockets.size - before).toBeLessThanOrEqual(1);
    // One connection is idle now: three at once take it and open two.
    const idle = sockets.size;
    await Promise.all([1, 2, 3].map(() => client.request('GET', `${base}/b`)));
    expect(sockets.size - idle).toBe(2);
  });

  it('reads a chunked reply that arrives in pieces, an empty one, and one whose server closes the connection', async () => {
    expect(await client.request('GET', `${base}/chunked`)).toMatchObject({ status: 201, json: { url: '/chunked' } });
    expect(await client.request('DELETE', `${base}/empty`)).toEqual({ status: 204, json: undefined });
    expect(await client.request('GET', `${base}/close`)).toMatchObject({ status: 200, json: { url: '/close' } });
    expect(await client.request('GET', `${base}/after-close`)).toMatchObject({ status: 404, json: { url: '/after-close' } });
  });

  it('rejects a reply cut off before its body is complete', async () => {
    await expect(client.request('GET', `${base}/cut`)).rejects.toThrow('closed the connection before its reply');
    expect((await client.request('GET', `${base}/next`)).status).toBe(404);
  });
});

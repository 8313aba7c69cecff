import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { waitFor } from '@paddock/testing';
import { IMAGE, useCluster } from './support/cluster';
import { http } from './support/infra';

interface ServiceStatus {
  port: number;
  visibility: string;
  endpoint?: { kind: string; auth: string; url?: string };
}
interface SandboxBody {
  sandboxId: string;
  status: { state: string; services?: ServiceStatus[] };
}

const ECHO_SERVER = readFileSync(join(__dirname, 'fixtures', 'echo-server.py'));
const publicService = (port: number, auth = 'ENDPOINT_AUTH_OPEN'): Record<string, unknown> => ({
  port,
  visibility: 'VISIBILITY_PUBLIC',
  endpoint: { kind: 'ENDPOINT_KIND_HTTPS', auth },
});

function echoOverWebSocket(url: string, message: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url.replace(/^http/, 'ws'));
    ws.once('open', () => ws.send(message));
    ws.once('message', (data: Buffer) => {
      resolve(data.toString());
      ws.close();
    });
    ws.once('error', reject);
  });
}

/** Public services of a local sandbox, served by the gateway at /s/<sandboxId>/<port>/ and relayed by the runner. */
describe('gateway: sandbox services with URLs', () => {
  const cluster = useCluster({ runnerIds: ['r-large'] });

  async function sandbox(id: string): Promise<SandboxBody> {
    return (await http(cluster().gw.url, 'GET', `/v1/sandboxes/${id}`, cluster().token)).json as SandboxBody;
  }

  it('serves python3 -m http.server through the URL in status.services (HTTP and WebSocket), only while the sandbox runs', async () => {
    const c = cluster();
    const created = await http(c.gw.url, 'POST', '/v1/sandboxes', c.token, {
      containers: [
        {
          image: IMAGE,
          command: ['sh', '-c', 'cd /workspace && echo hello-from-sandbox > index.txt && (python3 /tmp/echo.py 8001 &) && (python3 /tmp/echo.py 8002 &) && exec python3 -m http.server 8000'],
          files: [{ path: '/tmp/echo.py', content: ECHO_SERVER.toString('base64') }],
        },
      ],
      services: [publicService(8000), publicService(8001), publicService(8002, 'ENDPOINT_AUTH_TOKEN'), { port: 9000 }],
    });
    expect(created.status).toBe(200);
    const id = (created.json as SandboxBody).sandboxId;
    await waitFor(async () => (await sandbox(id)).status.state === 'STATE_RUNNING', { timeoutMs: 20_000, what: 'RUNNING' });
    const services = (await sandbox(id)).status.services ?? [];
    const base = `${c.gw.url}/s/${id}`;
    expect(services).toEqual([
      { port: 8000, protocol: 'TCP', visibility: 'VISIBILITY_PUBLIC', endpoint: { kind: 'ENDPOINT_KIND_HTTPS', auth: 'ENDPOINT_AUTH_OPEN', url: `${base}/8000/` } },
      { port: 8001, protocol: 'TCP', visibility: 'VISIBILITY_PUBLIC', endpoint: { kind: 'ENDPOINT_KIND_HTTPS', auth: 'ENDPOINT_AUTH_OPEN', url: `${base}/8001/` } },
      { port: 8002, protocol: 'TCP', visibility: 'VISIBILITY_PUBLIC', endpoint: { kind: 'ENDPOINT_KIND_HTTPS', auth: 'ENDPOINT_AUTH_TOKEN', url: `${base}/8002/` } },
      { port: 9000, protocol: 'TCP', visibility: 'VISIBILITY_UNSPECIFIED' },
    ]);
    const url = services[0]?.endpoint?.url as string;

    // The server may still be binding: the URL answers once it listens.
    const page = await waitFor(
      async () => {
        const r = await fetch(`${url}index.txt`);
        return r.status === 200 ? r : undefined;
      },
      { timeoutMs: 15_000, what: 'the sandbox http.server through its URL' },
    );
    expect(await page.text()).toBe('hello-from-sandbox\n');
    // Methods are relayed as they are (http.server has no POST: its 501 comes back). Without a
    // body: http.server answers a POST without reading one, and closing on unread bytes makes its
    // kernel send a reset that can discard the answer before any relay reads it (seen in CI as a
    // 503). Bytes in both directions are covered by the WebSocket echo below.
    const post = await fetch(`${url}index.txt`, { method: 'POST' });
    expect(post.status).toBe(501);
    // A path without its slash is sent to the one with it, so relative links resolve.
    const bare = await fetch(`${base}/8000`, { redirect: 'manual' });
    expect([bare.status, bare.headers.get('location')]).toEqual([308, `/s/${id}/8000/`]);

    const echoUrl = services[1]?.endpoint?.url as string;
    await waitFor(async () => (await fetch(`${echoUrl}ping`).catch(() => undefined))?.status === 200, { timeoutMs: 15_000, what: 'the echo server' });
    const echoed = (await (await fetch(`${echoUrl}a/b?c=d`)).json()) as { path: string; headers: Record<string, string> };
    expect(echoed.path).toBe('/a/b?c=d');
    expect(echoed.headers['x-forwarded-prefix']).toBe(`/s/${id}/8001`);
    expect(await echoOverWebSocket(`${echoUrl}ws`, 'hi-there')).toBe('echo:hi-there');

    // Token-protected: no token, or a wrong one, gets nothing; the caller's token never reaches the sandbox.
    const tokenUrl = services[2]?.endpoint?.url as string;
    expect((await fetch(`${tokenUrl}x`)).status).toBe(401);
    expect((await fetch(`${tokenUrl}x`, { headers: { authorization: 'Bearer not-a-token' } })).status).toBe(401);
    const withToken = await fetch(`${tokenUrl}x`, { headers: { authorization: `Bearer ${c.token}` } });
    expect(withToken.status).toBe(200);
    expect(((await withToken.json()) as { headers: Record<string, string> }).headers.authorization).toBeUndefined();

    // Ports that are not public services are not reachable, whatever listens on them.
    expect((await fetch(`${base}/9000/`)).status).toBe(404);
    expect((await fetch(`${base}/22/`)).status).toBe(404);

    expect((await http(c.gw.url, 'DELETE', `/v1/sandboxes/${id}`, c.token)).status).toBe(200);
    await waitFor(async () => (await sandbox(id)).status.state === 'STATE_COMPLETED', { timeoutMs: 20_000, what: 'COMPLETED' });
    const after = await fetch(`${url}index.txt`);
    expect(after.status).toBe(503);
    expect(await after.text()).toContain('CWSANDBOX_SERVICE_UNAVAILABLE');
    expect((await sandbox(id)).status.services?.[0]?.endpoint).toEqual({ kind: 'ENDPOINT_KIND_HTTPS', auth: 'ENDPOINT_AUTH_OPEN' });
  });

  it('refuses services it cannot serve at create, naming the field', async () => {
    const c = cluster();
    const r = await http(c.gw.url, 'POST', '/v1/sandboxes', c.token, {
      containers: [{ image: IMAGE }],
      services: [
        { port: 8000, visibility: 'VISIBILITY_PRIVATE' },
        { port: 8001, visibility: 'VISIBILITY_PUBLIC', endpoint: { kind: 'ENDPOINT_KIND_TLS_PASSTHROUGH' } },
        { port: 8002, visibility: 'VISIBILITY_PUBLIC', endpoint: { auth: 'ENDPOINT_AUTH_SHARE_TOKEN' } },
      ],
    });
    expect(r.status).toBe(400);
    for (const field of ['services[0].visibility', 'services[1].endpoint.kind', 'services[2].endpoint.auth']) expect(r.text).toContain(field);
  });
});

import type { Duplex } from 'node:stream';
import { waitFor } from '@paddock/testing';
import { destroyBackend, launchRunning, makeBackend, spec, type TestBackend } from './helpers';

async function roundTrip(sock: Duplex, request: string): Promise<string> {
  const parts: Buffer[] = [];
  sock.on('data', (c: Buffer) => parts.push(c));
  const ended = new Promise<void>((resolve) => sock.once('close', () => resolve()));
  sock.end(request);
  await ended;
  return Buffer.concat(parts).toString();
}

describe('local backend: connections into a sandbox port (service relay)', () => {
  let t: TestBackend;
  beforeAll(async () => {
    t = makeBackend({ warmLinks: 0 });
    // No egress: the sandbox's network namespace is bwrap's own, unreachable from the host.
    await launchRunning(
      t,
      spec('web', {
        servicePorts: [8000, 8001],
        command: ['sh', '-c', 'cd /workspace && echo served-from-sandbox > index.txt && exec python3 -m http.server 8000 --bind 127.0.0.1'],
      }),
    );
  });
  afterAll(async () => {
    const left = await destroyBackend(t);
    expect(left).toEqual({ leftoverProcesses: [], leftoverCgroups: [] });
  });

  it('relays an HTTP request to a server on the sandbox loopback, and refuses a closed port', async () => {
    const answer = await waitFor(
      async () => {
        try {
          return await roundTrip(await t.backend.connectPort('web', 8000), 'GET /index.txt HTTP/1.0\r\nHost: x\r\n\r\n');
        } catch {
          return undefined;
        }
      },
      { timeoutMs: 15_000, what: 'the sandbox http.server to answer' },
    );
    expect(answer).toMatch(/^HTTP\/1\.0 200 OK\r\n/);
    expect(answer.endsWith('served-from-sandbox\n')).toBe(true);
    await expect(t.backend.connectPort('web', 8001)).rejects.toMatchObject({ reason: 'CWSANDBOX_SERVICE_UNAVAILABLE' });
  });

  it('refuses a port the launch does not serve, though a server listens on it', async () => {
    await launchRunning(t, spec('web-undeclared', { servicePorts: [8001], command: ['python3', '-m', 'http.server', '8000', '--bind', '127.0.0.1', '--directory', '/usr/share'] }));
    const served = await waitFor(
      async () => {
        try {
          // The server answers on its port from inside the sandbox, so only the relay refuses it.
          const r = await t.backend.exec('web-undeclared', { argv: ['python3', '-c', 'import urllib.request as u; print(u.urlopen("http://127.0.0.1:8000/").status)'] });
          return r.exitCode === 0 ? r : undefined;
        } catch {
          return undefined;
        }
      },
      { timeoutMs: 15_000, what: 'the sandbox http.server to answer inside the sandbox' },
    );
    expect(served.stdout.toString().trim()).toBe('200');
    await expect(t.backend.connectPort('web-undeclared', 8000)).rejects.toMatchObject({
      reason: 'CWSANDBOX_INVALID_REQUEST',
      violations: [{ field: 'port', rule: 'public_service' }],
    });
    await t.backend.stop('web-undeclared', 0, 'STOPPED_BY_USER');
  });

  it('reaches a sandbox with its own egress link the same way (inside its namespace, not over the veth)', async () => {
    await launchRunning(t, spec('web-egress', { network: 'host', servicePorts: [8000], command: ['python3', '-m', 'http.server', '8000', '--bind', '127.0.0.1', '--directory', '/usr/share'] }));
    const answer = await waitFor(
      async () => {
        try {
          return await roundTrip(await t.backend.connectPort('web-egress', 8000), 'HEAD / HTTP/1.0\r\n\r\n');
        } catch {
          return undefined;
        }
      },
      { timeoutMs: 15_000, what: 'the egress sandbox http.server' },
    );
    expect(answer).toMatch(/^HTTP\/1\.0 200 OK\r\n/);
    await t.backend.stop('web-egress', 0, 'STOPPED_BY_USER');
  });

  it('stops relaying when the sandbox ends', async () => {
    await t.backend.stop('web', 0, 'STOPPED_BY_USER');
    await expect(t.backend.connectPort('web', 8000)).rejects.toMatchObject({ reason: 'CWSANDBOX_SANDBOX_NOT_RUNNING' });
  });
});

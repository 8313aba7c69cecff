import { randomUUID } from 'node:crypto';
import { IMAGE, specWith, startCluster, type Cluster } from './support/cluster';
import { waitFor } from '@paddock/testing';
import { http, startGateway } from './support/infra';

interface View {
  sandboxId: string;
  status: { state: string };
}

/** `GET /v1/sandboxes/{id}:wait` (the long poll behind the SDK's `wait()`) against real parts. */
describe('gateway :wait long poll', () => {
  let c: Cluster;

  beforeAll(async () => {
    c = await startCluster({ runnerIds: ['r-medium'] });
  }, 300_000);

  afterAll(async () => {
    await c?.stop();
  });

  it('answers as soon as a new sandbox is RUNNING, with no polling by the client, then at once', async () => {
    const created = await http(c.gw.url, 'POST', '/v1/sandboxes', c.token, { spec: specWith('250m') });
    expect(created.status).toBe(200);
    const id = (created.json as View).sandboxId;

    const t0 = performance.now();
    const waited = await http(c.gw.url, 'GET', `/v1/sandboxes/${id}:wait?timeoutSeconds=30`, c.token);
    const waitedMs = performance.now() - t0;
    expect(waited.status, waited.text).toBe(200);
    expect((waited.json as View).status.state).toBe('STATE_RUNNING');
    expect(waitedMs).toBeLessThan(30_000);
    expect(c.gw.waiters.size).toBe(0);
    const metrics = await http(c.gw.url, 'GET', '/metrics');
    expect(metrics.text).toMatch(/^paddock_gateway_long_polls 0$/m);
    expect(metrics.text).toMatch(/^paddock_gateway_route_cache_entries \d+$/m);

    const again = await http(c.gw.url, 'GET', `/v1/sandboxes/${id}:wait`, c.token);
    expect((again.json as View).status.state).toBe('STATE_RUNNING');
    expect((await http(c.gw.url, 'GET', `/v1/sandboxes/${id}`, c.token)).json).toEqual(again.json);
  });

  it('answers with the current state when the timeout runs out (timeoutSeconds=0 is a plain read)', async () => {
    const created = await http(c.gw.url, 'POST', '/v1/sandboxes', c.token, { spec: specWith('250m') });
    const id = (created.json as View).sandboxId;
    const now = await http(c.gw.url, 'GET', `/v1/sandboxes/${id}:wait?timeoutSeconds=0`, c.token);
    expect(now.status).toBe(200);
    expect(['STATE_PENDING', 'STATE_CREATING', 'STATE_RUNNING']).toContain((now.json as View).status.state);
  });

  it('until=ended waits for the sandbox to end (its main command exits); a bad until is refused naming it', async () => {
    const spec = { containers: [{ image: IMAGE, command: ['/bin/sh', '-c', 'sleep 0.5; exit 0'] }] };
    const created = await http(c.gw.url, 'POST', '/v1/sandboxes', c.token, { spec });
    expect(created.status, created.text).toBe(200);
    const id = (created.json as View).sandboxId;
    const ended = await http(c.gw.url, 'GET', `/v1/sandboxes/${id}:wait?until=ended&timeoutSeconds=30`, c.token);
    expect(ended.status).toBe(200);
    expect((ended.json as View).status.state).toBe('STATE_COMPLETED');

    const bad = await http(c.gw.url, 'GET', `/v1/sandboxes/${id}:wait?until=constructor`, c.token);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('until');
  });

  it('gives a foreign or missing id the same not_found as GET, and refuses a bad timeout naming the field', async () => {
    const created = await http(c.gw.url, 'POST', '/v1/sandboxes', c.token, { spec: specWith('250m') });
    const id = (created.json as View).sandboxId;
    const { adminToken: otherAdmin } = await c.infra.cp.createOrganization(`other-${randomUUID().slice(0, 8)}`);
    const { token: foreign } = await c.infra.cp.issueToken('SANDBOX_USER', otherAdmin);

    const missing = await http(c.gw.url, 'GET', `/v1/sandboxes/${randomUUID()}:wait?timeoutSeconds=1`, c.token);
    const foreignWait = await http(c.gw.url, 'GET', `/v1/sandboxes/${id}:wait?timeoutSeconds=1`, foreign);
    const foreignGet = await http(c.gw.url, 'GET', `/v1/sandboxes/${id}`, foreign);
    expect(missing.status).toBe(404);
    expect(foreignWait.status).toBe(404);
    expect(foreignWait.json).toEqual(missing.json);
    expect(foreignWait.json).toEqual(foreignGet.json);

    for (const bad of ['-1', '61', 'soon']) {
      const r = await http(c.gw.url, 'GET', `/v1/sandboxes/${id}:wait?timeoutSeconds=${bad}`, c.token);
      expect(r.status).toBe(400);
      expect(r.text).toContain('timeoutSeconds');
    }
  });

  it('a long poll on another gateway of the queue group answers at once, woken by the writing gateway', async () => {
    // The runner's event goes to one gateway of the queue group, which writes the row and
    // broadcasts the change. The re-check (the safety net for lost broadcasts) is set to 60 s
    // here: only the broadcast can make these waits prompt.
    const gw2 = await startGateway(c.infra, { GATEWAY_WAIT_RECHECK_MS: '60000', GATEWAY_RECONCILE_INTERVAL_MS: '600000' });
    try {
      await waitFor(() => gw2.registry.isFresh('r-medium'), { timeoutMs: 30_000, what: 'gw2 hears the runner' });
      const waits: number[] = [];
      for (let round = 0; round < 4; round++) {
        const created = await http(c.gw.url, 'POST', '/v1/sandboxes', c.token, { spec: specWith('250m') });
        expect(created.status).toBe(200);
        const id = (created.json as View).sandboxId;
        const t0 = performance.now();
        const waited = await http(gw2.url, 'GET', `/v1/sandboxes/${id}:wait?timeoutSeconds=50`, c.token);
        waits.push(performance.now() - t0);
        expect((waited.json as View).status.state).toBe('STATE_RUNNING');
        // until=ended on the other gateway: woken by the stop written on the first one.
        const ended = http(gw2.url, 'GET', `/v1/sandboxes/${id}:wait?until=ended&timeoutSeconds=50`, c.token);
        await waitFor(() => gw2.waiters.size > 0 || undefined, { what: 'the until=ended poll is parked' });
        const t1 = performance.now();
        expect((await http(c.gw.url, 'DELETE', `/v1/sandboxes/${id}`, c.token)).status).toBe(200);
        expect(((await ended).json as View).status.state).toBe('STATE_COMPLETED');
        waits.push(performance.now() - t1);
      }
      // Far below the 60 s re-check (each wait is a sandbox start or stop plus one broadcast).
      expect(Math.max(...waits)).toBeLessThan(20_000);
      expect(gw2.waiters.size).toBe(0);
    } finally {
      await gw2.close();
    }
  });
});

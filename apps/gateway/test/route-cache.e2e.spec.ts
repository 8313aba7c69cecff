import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import { subjects } from '@paddock/contracts';
import { waitFor, type ThrowawayNats } from '@paddock/testing';
import type { RunningGateway } from '../src/app';
import { specWith, startCluster, type Cluster } from './support/cluster';
import { http, startGateway } from './support/infra';

const RUNNER = 'r-medium';
const TERMINAL = new Set(['STATE_COMPLETED', 'STATE_FAILED']);

/** Counts exec requests that reach any runner (the reconciler's own list/get traffic is not counted). */
async function watchExecs(nats: ThrowawayNats): Promise<{ count(): number; close(): Promise<void> }> {
  const nc: NatsConnection = await nats.connectHarness();
  let n = 0;
  nc.subscribe(`rpc.runner.v1.*.sandbox.exec`, { callback: () => void n++ });
  await nc.flush();
  return { count: () => n, close: () => nc.close() };
}

/**
 * The route cache of exec and file calls (SandboxRouteCache) against real Postgres, NATS and a
 * runner: whatever the cache holds, the answers are the database-first path's answers.
 */
describe('gateway sandbox route cache coherence', () => {
  let c: Cluster;

  beforeAll(async () => {
    c = await startCluster({ runnerIds: [RUNNER] });
  }, 300_000);

  afterAll(async () => {
    await c?.stop();
  });

  async function runningSandbox(): Promise<string> {
    const r = await http(c.gw.url, 'POST', '/v1/sandboxes', c.token, { spec: specWith('250m') });
    expect(r.status).toBe(200);
    const id = (r.json as { sandboxId: string }).sandboxId;
    await waitFor(async () => ((await http(c.gw.url, 'GET', `/v1/sandboxes/${id}`, c.token)).json as { status: { state: string } }).status.state === 'STATE_RUNNING', {
      timeoutMs: 60_000,
      intervalMs: 50,
      what: `sandbox ${id} RUNNING`,
    });
    return id;
  }

  async function execOk(gw: RunningGateway, token: string, id: string): Promise<void> {
    const r = await http(gw.url, 'POST', `/v1/sandboxes/${id}:exec`, token, { command: ['echo', 'hi'] });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ exitCode: 0, stdout: Buffer.from('hi\n').toString('base64') });
  }

  async function waitTerminal(id: string): Promise<void> {
    await waitFor(async () => TERMINAL.has(((await http(c.gw.url, 'GET', `/v1/sandboxes/${id}`, c.token)).json as { status: { state: string } }).status.state), {
      timeoutMs: 60_000,
      intervalMs: 50,
      what: `sandbox ${id} terminal`,
    });
  }

  /** Ends a sandbox on its runner without any gateway: only the runner's state event tells them. */
  async function endOnRunner(id: string): Promise<void> {
    const msg = await c.nc.request(subjects.runnerRpc(RUNNER, 'delete'), JSON.stringify({ sandboxId: id, organizationId: c.orgId, gracePeriodSeconds: 0, allowMissing: true }), {
      timeout: 10_000,
    });
    expect(msg.json<{ ok: boolean }>().ok).toBe(true);
  }

  const terminatedRefusal = { code: 'failed_precondition', details: [{ reason: 'CWSANDBOX_SANDBOX_TERMINATED' }] };

  it('serves exec from the cache once the sandbox is known live, and a deleted sandbox never from it', async () => {
    const id = await runningSandbox();
    await execOk(c.gw, c.token, id);
    expect(c.gw.routes.get(c.orgId, id)).toEqual({ id, organizationId: c.orgId, runnerId: RUNNER });

    const del = await http(c.gw.url, 'DELETE', `/v1/sandboxes/${id}?gracePeriodSeconds=0`, c.token);
    expect(del.status).toBe(200);
    // Retired by the delete request itself, before the runner confirmed anything.
    expect(c.gw.routes.get(c.orgId, id)).toBeUndefined();
    await waitTerminal(id);

    const execs = await watchExecs(c.infra.nats);
    const r = await http(c.gw.url, 'POST', `/v1/sandboxes/${id}:exec`, c.token, { command: ['true'] });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject(terminatedRefusal);
    // Answered from the row, as before the cache existed: nothing reached the runner.
    expect(execs.count()).toBe(0);
    await execs.close();
    expect(c.gw.routes.get(c.orgId, id)).toBeUndefined();
  });

  it('a sandbox a runner event moves to a terminal state is retired: exec gets the terminal refusal without reaching the runner', async () => {
    const id = await runningSandbox();
    await execOk(c.gw, c.token, id);
    expect(c.gw.routes.get(c.orgId, id)).toBeDefined();

    await endOnRunner(id);
    await waitTerminal(id);
    expect(c.gw.routes.get(c.orgId, id)).toBeUndefined();

    const execs = await watchExecs(c.infra.nats);
    for (const [method, suffix, body] of [
      ['POST', ':exec', { command: ['true'] }],
      ['GET', ':stat?path=/etc', undefined],
      ['POST', ':writeFile', { path: '/tmp/x', content: '' }],
    ] as const) {
      const r = await http(c.gw.url, method, `/v1/sandboxes/${id}${suffix}`, c.token, body);
      expect(r.status, `${method} ${suffix}`).toBe(400);
      expect(r.json).toMatchObject(terminatedRefusal);
    }
    expect(execs.count()).toBe(0);
    await execs.close();
  });

  it('another organization never gets the cached route: its exec, file call and delete are a missing sandbox, byte for byte', async () => {
    const id = await runningSandbox();
    await execOk(c.gw, c.token, id);
    const cached = c.gw.routes.get(c.orgId, id);
    expect(cached).toBeDefined();

    const tokenB = (await c.infra.cp.createOrganization(`other-${randomUUID().slice(0, 8)}`)).adminToken;
    const missing = randomUUID();
    const execs = await watchExecs(c.infra.nats);
    for (const [method, suffix, body] of [
      ['POST', ':exec', { command: ['true'] }],
      ['GET', ':readFile?path=/etc/hostname', undefined],
      ['DELETE', '', undefined],
    ] as const) {
      const foreign = await http(c.gw.url, method, `/v1/sandboxes/${id}${suffix}`, tokenB, body);
      const absent = await http(c.gw.url, method, `/v1/sandboxes/${missing}${suffix}`, tokenB, body);
      expect(foreign.status, `${method} ${suffix}`).toBe(404);
      expect(foreign.text).toBe(absent.text);
      expect(foreign.json).toMatchObject({ code: 'not_found', details: [{ reason: 'CWSANDBOX_SANDBOX_NOT_FOUND' }] });
    }
    expect(execs.count()).toBe(0);
    await execs.close();
    // The owner's entry is untouched by the other organization's DELETE, and still serves the owner.
    expect(c.gw.routes.get(c.orgId, id)).toBe(cached);
    await execOk(c.gw, c.token, id);
    await http(c.gw.url, 'DELETE', `/v1/sandboxes/${id}?gracePeriodSeconds=0`, c.token);
  });

  it('a gateway that missed the terminal event (another gateway of the queue group applied it) still answers with the terminal refusal', async () => {
    // gw2's reconciler stays idle, so only the runner's event or the exec fallback can tell it.
    const gw2 = await startGateway(c.infra, { GATEWAY_RECONCILE_INTERVAL_MS: '600000' });
    try {
      await waitFor(() => gw2.registry.isFresh(RUNNER), { timeoutMs: 30_000, what: 'gw2 hears the runner' });
      // Which gateway gets the event is up to the queue group: repeat until one of them was left
      // with a stale entry (its exec reached the runner), which happens in at least half the runs.
      let staleSeen = false;
      for (let attempt = 0; attempt < 8 && !staleSeen; attempt++) {
        const id = await runningSandbox();
        await execOk(c.gw, c.token, id);
        await execOk(gw2, c.token, id);
        expect(c.gw.routes.get(c.orgId, id)).toBeDefined();
        expect(gw2.routes.get(c.orgId, id)).toBeDefined();

        await endOnRunner(id);
        await waitTerminal(id);

        const execs = await watchExecs(c.infra.nats);
        const answers: string[] = [];
        for (const gw of [c.gw, gw2]) {
          const r = await http(gw.url, 'POST', `/v1/sandboxes/${id}:exec`, c.token, { command: ['true'] });
          expect(r.status).toBe(400);
          expect(r.json).toMatchObject(terminatedRefusal);
          answers.push(r.text);
          expect(gw.routes.get(c.orgId, id)).toBeUndefined();
        }
        // Byte-identical: the stale gateway answered from the row, not with the runner's wording.
        expect(answers[0]).toBe(answers[1]);
        expect(execs.count()).toBeLessThanOrEqual(1);
        staleSeen = execs.count() === 1;
        await execs.close();
      }
      expect(staleSeen).toBe(true);
    } finally {
      await gw2.close();
    }
  });
});

import { SandboxStateEventSchema, subjects, type SandboxStateEvent } from '@paddock/contracts';
import { waitFor } from '@paddock/testing';
import type { RunningGateway } from '../src/app';
import { IMAGE } from './support/cluster';
import { http, startGateway, startInfra, type Infra } from './support/infra';
import { startRunner, type RunnerProcess } from './support/runners';

interface View {
  sandboxId: string;
  status: { state: string };
}

const WARM = {
  containers: [
    {
      image: IMAGE,
      resourceRequirements: {
        requests: { cpu: '10m', memory: '32Mi' },
        limits: { cpu: '1', memory: '256Mi' },
      },
    },
  ],
};
const COLD = {
  containers: [
    {
      image: IMAGE,
      resourceRequirements: {
        requests: { cpu: '20m', memory: '32Mi' },
        limits: { cpu: '1', memory: '256Mi' },
      },
    },
  ],
};

/**
 * A warm take through the gateway: the runner's state events for it (PENDING, CREATING, RUNNING)
 * reach the gateway just ahead of the create's reply; the row ends as the runner last described it,
 * and the create (answered before Nest's pipeline) keeps its idempotency by requestId.
 */
describe('gateway: a warm take, end to end', () => {
  let infra: Infra;
  let gw: RunningGateway;
  let runner: RunnerProcess;
  let token: string;

  beforeAll(async () => {
    infra = await startInfra();
    gw = await startGateway(infra);
    token = (await infra.cp.issueToken('SANDBOX_USER')).token;
    const policyEtag = await infra.cp.declareRunner('r-warm', {});
    runner = startRunner({
      runnerId: 'r-warm',
      organizationId: infra.cp.organizationId,
      nats: await infra.nats.env('runner', 'r-warm'),
      policy: {},
      policyEtag,
      warmPools: [{ name: 'one', size: 1, template: WARM }],
      heartbeatMs: 300,
    });
    await waitFor(
      () =>
        gw.registry.get('r-warm')?.heartbeat.warmPoolStatus?.find((p) => p.name === 'one')
          ?.ready === 1,
      {
        timeoutMs: 150_000,
        intervalMs: 100,
        what: `the warm pool ready (${runner.output().slice(-500)})`,
      },
    );
  }, 200_000);

  afterAll(async () => {
    await gw?.close();
    await runner?.stop();
    await infra?.stop();
  });

  const rowOf = (id: string) =>
    gw.db.selectFrom('gw_sandboxes').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('a warm take answers RUNNING, and its state events land on the accepted row (none lost)', async () => {
    const created = await http(gw.url, 'POST', '/v1/sandboxes', token, { spec: WARM });
    expect(created.status, created.text).toBe(200);
    const { sandboxId, status } = created.json as View;
    expect(status.state).toBe('STATE_RUNNING');
    // The reply carries no event sequence (the accept records 0); the RUNNING event does.
    await waitFor(async () => (await rowOf(sandboxId)).state_sequence > 0, {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: 'the RUNNING event applied',
    });
    const row = await rowOf(sandboxId);
    expect(row.state).toBe('STATE_RUNNING');
    expect(row.runner_acknowledged).toBe(true);
    expect(row.start_time).not.toBeNull();
    expect(row.placement.winner).toBe('r-warm');
    expect((await http(gw.url, 'DELETE', `/v1/sandboxes/${sandboxId}`, token)).status).toBe(200);
  });

  it("the events that came before the reply are written by the accept itself: the row is the runner's last word at once", async () => {
    const nc = await infra.nats.connectHarness();
    const seen: SandboxStateEvent[] = [];
    nc.subscribe(subjects.allSandboxStates(), { callback: (_e, m) => void seen.push(SandboxStateEventSchema.parse(m.json())) });
    await nc.flush();
    try {
      // A heartbeat sent after this test began: the one before may predate the last test's take.
      const since = gw.registry.get('r-warm')?.heartbeat.sequence ?? 0;
      await waitFor(() => {
        const hb = gw.registry.get('r-warm')?.heartbeat;
        return (hb?.sequence ?? 0) > since && hb?.warmPoolStatus?.find((p) => p.name === 'one')?.ready === 1;
      }, {
        timeoutMs: 150_000,
        intervalMs: 100,
        what: 'the warm pool refilled',
      });
      const created = await http(gw.url, 'POST', '/v1/sandboxes', token, { spec: WARM });
      expect(created.status, created.text).toBe(200);
      const { sandboxId, status } = created.json as View;
      expect(status.state).toBe('STATE_RUNNING');
      const ours = () => seen.filter((e) => e.sandboxId === sandboxId);
      await waitFor(() => ours().some((e) => e.state === 'STATE_RUNNING'), { timeoutMs: 10_000, intervalMs: 20, what: 'the RUNNING event seen' });
      const running = ours().find((e) => e.state === 'STATE_RUNNING') as SandboxStateEvent;
      const row = await rowOf(sandboxId);
      // Read right after the reply, no wait: the RUNNING event's sequence and start time are there.
      expect(row.state).toBe('STATE_RUNNING');
      expect(row.state_sequence).toBe(running.sequence);
      expect(row.start_time?.toISOString()).toBe(new Date(running.at).toISOString());
      expect(row.runner_acknowledged).toBe(true);
      expect(row.placement.winner).toBe('r-warm');
      // And nothing rewrites it afterwards: the events were folded, not written again.
      await new Promise((r) => setTimeout(r, 300));
      const later = await rowOf(sandboxId);
      expect(later.updated_at.getTime()).toBe(row.updated_at.getTime());
      expect(later.state_sequence).toBe(running.sequence);
      expect((await http(gw.url, 'DELETE', `/v1/sandboxes/${sandboxId}`, token)).status).toBe(200);
    } finally {
      await nc.close();
    }
  });

  it('a requestId in the query makes the create idempotent; reused with another spec it is refused naming it', async () => {
    const first = await http(gw.url, 'POST', '/v1/sandboxes?requestId=warm-create-1', token, {
      spec: COLD,
    });
    expect(first.status, first.text).toBe(200);
    const again = await http(gw.url, 'POST', '/v1/sandboxes?requestId=warm-create-1', token, {
      spec: COLD,
    });
    expect((again.json as View).sandboxId).toBe((first.json as View).sandboxId);
    const reused = await http(gw.url, 'POST', '/v1/sandboxes?requestId=warm-create-1', token, {
      spec: WARM,
    });
    expect(reused.status).toBe(400);
    expect(reused.json).toMatchObject({
      code: 'invalid_argument',
      details: [
        { reason: 'CWSANDBOX_INVALID_REQUEST' },
        { fieldViolations: [{ field: 'requestId', rule: 'idempotency_key_reuse' }] },
      ],
    });
    expect(
      (await http(gw.url, 'DELETE', `/v1/sandboxes/${(first.json as View).sandboxId}`, token))
        .status,
    ).toBe(200);
  });

  it('a cold create (no warm match) still reaches RUNNING, through :wait, from the event that follows', async () => {
    const created = await http(gw.url, 'POST', '/v1/sandboxes', token, { spec: COLD });
    expect(created.status, created.text).toBe(200);
    const { sandboxId, status } = created.json as View;
    expect(['STATE_PENDING', 'STATE_CREATING', 'STATE_RUNNING']).toContain(status.state);
    const waited = await http(
      gw.url,
      'GET',
      `/v1/sandboxes/${sandboxId}:wait?timeoutSeconds=30`,
      token,
    );
    expect((waited.json as View).status.state).toBe('STATE_RUNNING');
    expect((await rowOf(sandboxId)).state).toBe('STATE_RUNNING');
    expect((await http(gw.url, 'DELETE', `/v1/sandboxes/${sandboxId}`, token)).status).toBe(200);
  });
});

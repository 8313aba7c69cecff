import { subjects, type ManagedRunner, type RunnerConnectionStatus } from '@paddock/contracts';
import { waitFor } from '@paddock/testing';
import { RunnerIntakeService } from '../../src/modules/intake/runner-intake.service';
import { api, startTestApp, type TestApp } from '../support/app';
import { createRunner, heartbeat, installReport } from '../support/fixtures';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const connectionOf = async (runnerId: string): Promise<string> =>
  (await api<ManagedRunner>(t, 'GET', `/v1/sandbox/managedRunners/${runnerId}`, { token: t.adminToken })).body.connectionStatus;

const metric = async (line: RegExp): Promise<number> => {
  const text = (await api(t, 'GET', '/metrics')).text;
  const m = text.split('\n').find((l) => line.test(l));
  return m ? Number(m.split(' ').pop()) : 0;
};

describe('heartbeat intake', () => {
  it('CONNECTED on the first heartbeat, DISCONNECTED once heartbeats stop for 15 s (never later than 30 s)', async () => {
    const { clusterId } = await createRunner(t, 'hb-1');
    const notices: { runnerId: string; connectionStatus: RunnerConnectionStatus }[] = [];
    const sub = t.nats.subscribe(subjects.runnerConnection('hb-1'), {
      callback: (_e, m) => {
        notices.push(m.json());
      },
    });
    await t.nats.flush();

    t.nats.publish(subjects.runnerHeartbeat('hb-1'), JSON.stringify(heartbeat(t, 'hb-1', clusterId)));
    await waitFor(async () => (await connectionOf('hb-1')) === 'RUNNER_CONNECTION_STATUS_CONNECTED', { what: 'CONNECTED' });
    const lastBeat = t.clock.now().getTime();

    // Heartbeats stop. 14 s later (by the app's clock) the runner is still connected...
    t.clock.advance(14_000);
    await t.app.get(RunnerIntakeService).sweep();
    expect(await connectionOf('hb-1')).toBe('RUNNER_CONNECTION_STATUS_CONNECTED');
    // ...and once the last heartbeat is 15 s old the background sweeper (every 50 ms here) marks it.
    t.clock.advance(1_001);
    await waitFor(async () => (await connectionOf('hb-1')) === 'RUNNER_CONNECTION_STATUS_DISCONNECTED', { what: 'DISCONNECTED' });
    const staleFor = t.clock.now().getTime() - lastBeat;
    expect(staleFor).toBeGreaterThanOrEqual(15_000);
    expect(staleFor).toBeLessThanOrEqual(30_000);

    await waitFor(() => notices.length >= 2, { what: 'connection notices' });
    expect(notices.map((n) => n.connectionStatus)).toEqual([
      'RUNNER_CONNECTION_STATUS_CONNECTED',
      'RUNNER_CONNECTION_STATUS_DISCONNECTED',
    ]);

    // A new heartbeat reconnects it.
    t.nats.publish(subjects.runnerHeartbeat('hb-1'), JSON.stringify(heartbeat(t, 'hb-1', clusterId, { sequence: 2 })));
    await waitFor(async () => (await connectionOf('hb-1')) === 'RUNNER_CONNECTION_STATUS_CONNECTED', { what: 'reconnect' });
    sub.unsubscribe();
  });

  it('drops invalid messages and ignores unknown runners without stopping', async () => {
    const { clusterId } = await createRunner(t, 'hb-2');
    const invalidBefore = await metric(/^paddock_cp_nats_messages_total\{kind="heartbeat",outcome="invalid"\}/);
    const unknownBefore = await metric(/^paddock_cp_nats_messages_total\{kind="heartbeat",outcome="unknown_runner"\}/);
    t.nats.publish(subjects.runnerHeartbeat('hb-2'), 'not json{');
    t.nats.publish(subjects.runnerHeartbeat('hb-2'), JSON.stringify({ runnerId: 'hb-2' }));
    // Valid payload of another runner on hb-2's subject: dropped, not applied to either.
    t.nats.publish(subjects.runnerHeartbeat('hb-2'), JSON.stringify(heartbeat(t, 'hb-1', clusterId)));
    t.nats.publish(subjects.runnerHeartbeat('ghost'), JSON.stringify(heartbeat(t, 'ghost', clusterId)));
    t.nats.publish(subjects.runnerHeartbeat('hb-2'), JSON.stringify(heartbeat(t, 'hb-2', clusterId)));
    await waitFor(async () => (await connectionOf('hb-2')) === 'RUNNER_CONNECTION_STATUS_CONNECTED', { what: 'CONNECTED after junk' });
    expect(await metric(/^paddock_cp_nats_messages_total\{kind="heartbeat",outcome="invalid"\}/)).toBe(invalidBefore + 3);
    expect(await metric(/^paddock_cp_nats_messages_total\{kind="heartbeat",outcome="unknown_runner"\}/)).toBe(unknownBefore + 1);
    const ghost = await api(t, 'GET', '/v1/sandbox/managedRunners/ghost', { token: t.adminToken });
    expect(ghost.status).toBe(404);
  });

  it('a heartbeat naming another organization does not touch this organization\'s runner', async () => {
    const { clusterId } = await createRunner(t, 'hb-3');
    const other = await t.createOrganization('elsewhere');
    t.nats.publish(subjects.runnerHeartbeat('hb-3'), JSON.stringify(heartbeat({ organizationId: other.id }, 'hb-3', clusterId)));
    t.nats.publish(subjects.runnerHeartbeat('hb-2'), JSON.stringify(heartbeat(t, 'hb-2', clusterId, { sequence: 9 })));
    await waitFor(async () => (await metric(/^paddock_cp_nats_messages_total\{kind="heartbeat",outcome="unknown_runner"\}/)) >= 2, {
      what: 'foreign heartbeat counted as unknown',
    });
    expect(await connectionOf('hb-3')).not.toBe('RUNNER_CONNECTION_STATUS_CONNECTED');
  });
});

describe('install report intake', () => {
  it('a controller report reaches the runner read model', async () => {
    const { clusterId } = await createRunner(t, 'ir-1');
    t.nats.publish(subjects.installReport(clusterId), JSON.stringify(installReport(t, 'ir-1', clusterId, { installStatus: 'RUNNER_INSTALL_STATUS_PROVISIONING' })));
    await waitFor(async () => (await api<ManagedRunner>(t, 'GET', '/v1/sandbox/managedRunners/ir-1', { token: t.adminToken })).body.installStatus === 'RUNNER_INSTALL_STATUS_PROVISIONING', { what: 'PROVISIONING' });
    t.nats.publish(subjects.installReport(clusterId), 'garbage');
    t.nats.publish(
      subjects.installReport(clusterId),
      JSON.stringify(
        installReport(t, 'ir-1', clusterId, {
          installStatus: 'RUNNER_INSTALL_STATUS_FAILED',
          fencingToken: 2,
          installError: { reason: 'ImagePullBackOff', message: 'cannot pull', remediationHints: ['check the registry'], occurredAt: new Date().toISOString() },
        }),
      ),
    );
    const failed = await waitFor(async () => {
      const r = await api<ManagedRunner>(t, 'GET', '/v1/sandbox/managedRunners/ir-1', { token: t.adminToken });
      return r.body.installStatus === 'RUNNER_INSTALL_STATUS_FAILED' ? r.body : undefined;
    }, { what: 'FAILED' });
    expect(failed.installError).toMatchObject({ reason: 'ImagePullBackOff', remediationHints: ['check the registry'] });
  });
});

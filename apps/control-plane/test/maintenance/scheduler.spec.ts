import type { ManagedRunner } from '@paddock/contracts';
import { waitFor } from '@paddock/testing';
import type { Release } from '../../src/modules/releases';
import { MaintenanceScheduler } from '../../src/modules/maintenance/maintenance.scheduler';
import { api, startTestApp, type TestApp } from '../support/app';
import { createRunner } from '../support/fixtures';

// Friday 2026-11-27 12:00 UTC: outside the Saturday 09:00–13:00 window.
const FRIDAY_NOON = '2026-11-27T12:00:00.000Z';
const SATURDAY_TEN = '2026-11-28T10:00:00.000Z';
const saturdayWindow = { windows: [{ cron: '0 9 * * SAT', durationSeconds: 14400 }], exclusions: [] };

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ startAt: FRIDAY_NOON, env: { PADDOCK_MAINTENANCE_INTERVAL_MS: '50' } });
});
afterAll(async () => {
  await t?.close();
});

const runner = async (id: string): Promise<ManagedRunner> =>
  (await api<ManagedRunner>(t, 'GET', `/v1/sandbox/managedRunners/${id}`, { token: t.adminToken })).body;

it('applies an available update only inside a maintenance window, never inside an exclusion', async () => {
  await createRunner(t, 'windowed', { spec: { maintenancePolicy: saturdayWindow } });
  await createRunner(t, 'excluded', {
    spec: {
      maintenancePolicy: {
        ...saturdayWindow,
        exclusions: [{ startTime: '2026-11-28T00:00:00Z', endTime: '2026-11-29T00:00:00Z', reason: 'freeze' }],
      },
    },
  });
  await createRunner(t, 'anytime', { spec: { maintenancePolicy: { windows: [], exclusions: [] } } });
  const before = await runner('windowed');
  expect(before.updateAvailable).toBe(false);

  const published = await api<Release>(t, 'POST', '/v1/sandbox/releases', {
    token: t.adminToken,
    body: { channel: 'RELEASE_CHANNEL_STABLE', version: '0.5.0', image: 'paddock/runner:0.5.0' },
  });
  expect(published.status).toBe(200);
  const newRevision = String(published.body.revision);

  // Friday: only the runner without windows is updated.
  await waitFor(async () => (await runner('anytime')).targetRevision === newRevision, { what: 'window-less runner updated' });
  const friday = await t.app.get(MaintenanceScheduler).tick();
  expect(friday.deferred.sort()).toEqual([`${t.organizationId}/excluded`, `${t.organizationId}/windowed`]);
  expect(await runner('windowed')).toMatchObject({ targetRevision: before.targetRevision, updateAvailable: true });

  // Saturday 10:00 UTC: inside the window; the excluded runner still waits.
  t.clock.set(SATURDAY_TEN);
  await waitFor(async () => (await runner('windowed')).targetRevision === newRevision, { what: 'windowed runner updated' });
  expect(await runner('windowed')).toMatchObject({ updateAvailable: false });
  const saturday = await t.app.get(MaintenanceScheduler).tick();
  expect(saturday.deferred).toEqual([`${t.organizationId}/excluded`]);
  expect(await runner('excluded')).toMatchObject({ targetRevision: before.targetRevision, updateAvailable: true });
});

/**
 * A PATCH decides from the row its process last wrote for the runner, and keeps that decision
 * only if its write (conditional on the row's version) lands. Two control planes on one database:
 * each one's remembered row goes stale when the other writes, and every answer must still be the
 * current row's, as if it had been read.
 */
import { Client } from 'pg';
import type { ManagedRunner } from '@paddock/contracts';
import { api, startTestApp, type TestApp } from '../support/app';
import { fieldViolation, type ErrorBody } from '../support/errors';
import { createRunner, installReport } from '../support/fixtures';
import { report } from './support';

let a: TestApp;
let b: TestApp;
let pg: Client;
beforeAll(async () => {
  a = await startTestApp();
  // Same database and operator token: a second replica of the same installation.
  b = await startTestApp({ env: { DATABASE_URL: a.databaseUrl, PADDOCK_BOOTSTRAP_TOKEN: a.adminToken } });
  pg = new Client({ connectionString: a.databaseUrl });
  await pg.connect();
});
afterAll(async () => {
  await pg?.end();
  await b?.close();
  await a?.close();
});

const patch = <T = ManagedRunner>(t: TestApp, body: Record<string, unknown>, mask = 'policy') =>
  api<T>(t, 'PATCH', `/v1/sandbox/managedRunners/reuse-runner?updateMask=${mask}`, { token: a.adminToken, body });
const lifetime = (seconds: number) => ({ constraints: { lifecycle: { defaultLifetimeSeconds: seconds } } });

async function eventCount(uid: string): Promise<number> {
  const r = await pg.query<{ n: string }>('SELECT count(*) AS n FROM es_messages WHERE stream_id = $1', [`managed_runner-${uid}`]);
  return Number(r.rows[0]?.n ?? 0);
}

it('answers as the current row does after another replica wrote the runner', async () => {
  const { body: created } = await createRunner(a, 'reuse-runner');

  // a writes (and remembers the row it wrote).
  const e1 = await patch(a, { etag: created.etag, policy: lifetime(11) });
  expect(e1.status).toBe(200);
  // b writes behind a's back.
  const e2 = await patch(b, { etag: e1.body.etag, policy: lifetime(22) });
  expect(e2.status).toBe(200);

  // The current etag is accepted by a, although the row it remembers names the one before.
  const e3 = await patch(a, { etag: e2.body.etag, policy: lifetime(33) });
  expect(e3.status).toBe(200);
  expect(e3.body.policy).toEqual(lifetime(33));
  expect(e3.body.etag).not.toBe(e2.body.etag);

  // b moves the policy again; a's remembered row (its own write) would take e3, which is stale now.
  const e4 = await patch(b, { etag: e3.body.etag, policy: lifetime(44) });
  expect(e4.status).toBe(200);
  const before = await eventCount(created.uid);
  const stale = await patch<ErrorBody>(a, { etag: e3.body.etag, policy: lifetime(55) });
  expect(stale.status).toBe(400);
  expect(stale.body.code).toBe('failed_precondition');
  expect(stale.body.message).toBe('managed_runner.etag is stale; reload the runner and retry');
  expect(fieldViolation(stale.body, 'etag').rule).toBe('must equal the etag of the current policy revision');
  expect(await eventCount(created.uid)).toBe(before);

  // A PATCH that changes nothing answers with the current runner, b's latest change included.
  const renamed = await patch(b, { displayName: 'named on b' }, 'display_name');
  expect(renamed.status).toBe(200);
  const same = await patch(a, { etag: e4.body.etag, policy: lifetime(44) });
  expect(same.status).toBe(200);
  expect(same.body.displayName).toBe('named on b');
  expect(same.body.etag).toBe(e4.body.etag);
  expect(await eventCount(created.uid)).toBe(before + 1);

  const got = await api<ManagedRunner>(a, 'GET', '/v1/sandbox/managedRunners/reuse-runner', { token: a.adminToken });
  expect(same.body).toEqual(got.body);
});

it('a runner removed and created again under the same id is written on its new stream', async () => {
  const { body: first, clusterId } = await createRunner(a, 'again-runner');
  const rename = (t: TestApp, displayName: string) =>
    api<ManagedRunner>(t, 'PATCH', '/v1/sandbox/managedRunners/again-runner?updateMask=display_name', { token: a.adminToken, body: { displayName } });
  expect((await rename(a, 'first')).status).toBe(200);

  // On b: deleted, reported gone by its controller (the row goes), created again.
  expect((await api(b, 'DELETE', '/v1/sandbox/managedRunners/again-runner', { token: a.adminToken })).status).toBe(200);
  await report(b, installReport(b, 'again-runner', clusterId, { gone: true, fencingToken: 1 }));
  const oldEvents = await eventCount(first.uid);
  const cluster = await b.registerCluster(a.adminToken, { name: 'cluster-again-2', zone: 'us-east-1' });
  const second = await api<ManagedRunner>(b, 'POST', '/v1/sandbox/managedRunners', {
    token: a.adminToken,
    body: { identity: { runnerId: 'again-runner', zone: 'us-east-1', clusterId: cluster.id }, spec: { releaseChannel: 'RELEASE_CHANNEL_STABLE' }, policy: {} },
  });
  expect(second.status).toBe(200);
  expect(second.body.uid).not.toBe(first.uid);

  // a remembers the first runner's row; the write lands on the second runner, the first stream stays closed.
  const renamed = await rename(a, 'second');
  expect(renamed.status).toBe(200);
  expect(renamed.body.uid).toBe(second.body.uid);
  expect(renamed.body.displayName).toBe('second');
  expect(await eventCount(first.uid)).toBe(oldEvents);
  expect(await eventCount(second.body.uid)).toBe(2);
});

/**
 * Optimistic concurrency: N = 50 policy PATCHes carrying the same etag, released together. Per iteration:
 * exactly one success, 49 `failed_precondition`, no lost update (the final policy is the winner's),
 * and the stream version and event count each rise by exactly one. PADDOCK_SOAK raises the
 * iteration count.
 */
import { Client } from 'pg';
import type { ManagedRunner } from '@paddock/contracts';
import { api, startTestApp, type TestApp } from '../support/app';
import { isErrorBody, type ErrorBody } from '../support/errors';
import { createRunner } from '../support/fixtures';

const N = 50;
const ITERATIONS = process.env.PADDOCK_SOAK ? 200 : 4;

let t: TestApp;
let pg: Client;
beforeAll(async () => {
  t = await startTestApp();
  pg = new Client({ connectionString: t.databaseUrl });
  await pg.connect();
});
afterAll(async () => {
  await pg?.end();
  await t?.close();
});

async function streamFacts(uid: string): Promise<{ version: number; events: number }> {
  const v = await pg.query<{ stream_position: string }>('SELECT stream_position FROM es_streams WHERE stream_id = $1', [`managed_runner-${uid}`]);
  const c = await pg.query<{ n: string }>('SELECT count(*) AS n FROM es_messages WHERE stream_id = $1', [`managed_runner-${uid}`]);
  return { version: Number(v.rows[0]?.stream_position ?? 0), events: Number(c.rows[0]?.n ?? 0) };
}

it(`CP-1: ${N} concurrent policy replacements with one etag → exactly one wins, ${ITERATIONS} iterations`, async () => {
  const { body } = await createRunner(t, 'cp1-runner');
  const uid = body.uid;
  const tally = { success: 0, preconditionFailed: 0, other: 0 };
  for (let iteration = 0; iteration < ITERATIONS; iteration++) {
    const before = await api<ManagedRunner>(t, 'GET', '/v1/sandbox/managedRunners/cp1-runner', { token: t.adminToken });
    const facts = await streamFacts(uid);
    const etag = before.body.etag;
    const results = await Promise.all(
      Array.from({ length: N }, (_v, i) =>
        api<ManagedRunner | ErrorBody>(t, 'PATCH', '/v1/sandbox/managedRunners/cp1-runner?updateMask=policy', {
          token: t.adminToken,
          body: { etag, policy: { constraints: { lifecycle: { defaultLifetimeSeconds: 1000 + iteration * N + i } } } },
        }),
      ),
    );
    const winners = results.flatMap((r) => (r.status === 200 && !isErrorBody(r.body) ? [r.body] : []));
    const losers = results.flatMap((r) => (r.status === 400 && isErrorBody(r.body) && r.body.code === 'failed_precondition' ? [r.body] : []));
    tally.success += winners.length;
    tally.preconditionFailed += losers.length;
    tally.other += N - winners.length - losers.length;
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(N - 1);
    for (const l of losers) expect(l.message).toBe('managed_runner.etag is stale; reload the runner and retry');

    const after = await api<ManagedRunner>(t, 'GET', '/v1/sandbox/managedRunners/cp1-runner', { token: t.adminToken });
    expect(after.body.policy).toEqual(winners[0]?.policy);
    expect(after.body.etag).toBe(winners[0]?.etag);
    expect(after.body.etag).not.toBe(etag);
    // Everything but the policy is the prior state.
    expect({ ...after.body, policy: null, etag: null, updateTime: null }).toEqual({ ...before.body, policy: null, etag: null, updateTime: null });
    const next = await streamFacts(uid);
    expect(next.version).toBe(facts.version + 1);
    expect(next.events).toBe(facts.events + 1);
  }
  expect(tally).toEqual({ success: ITERATIONS, preconditionFailed: ITERATIONS * (N - 1), other: 0 });
  console.info(`CP-1: ${ITERATIONS} iterations × ${N}: ${JSON.stringify(tally)}`);
});

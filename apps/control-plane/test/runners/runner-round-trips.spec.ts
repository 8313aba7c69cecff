/**
 * Pins the database round trips of the two hot paths, so a change that adds one fails here
 * instead of silently in `pnpm bench`:
 * - GET /v1/sandbox/managedRunners/{id}: ONE statement (row + its channel's latest release);
 * - policy PATCH: TWO statements, independent of the stream's length: the row read (with the
 *   latest release, no lock, no transaction), then one autocommit statement that locks the row,
 *   moves the stream under the expected version, inserts the event and updates the row RETURNING
 *   the response row (`EventStore.appendProjected`).
 * Statements are captured at the `pg` client (every statement the app sends, kysely's BEGIN and
 * COMMIT included). Statements of the caller's authentication and the after-commit consumer nudge
 * (NOTIFY on the waker's own connection, not awaited by the request) are not the runners
 * module's and are left out.
 *
 * It also checks the premise of the PATCH path: the `cp_runners` row, decoded back into a state,
 * equals the fold of the runner's whole stream after creates, policy and settings edits, install
 * reports, connection changes and an applied update.
 */
import { CommandBus } from '@nestjs/cqrs';
import { Client, type QueryConfig } from 'pg';
import type { Selectable } from 'kysely';
import { RecordRunnerConnectionCommand } from '../../src/modules/runners';
import { evolve, initialState, type RunnerState } from '../../src/modules/runners/domain/runner.decider';
import { runnerStateOfRow } from '../../src/modules/runners/projections/runner-row.projection';
import type { RunnersTable } from '../../src/modules/runners/runners.tables';
import type { ManagedRunner, RunnerEvent } from '@paddock/contracts';
import { api, startTestApp, type ApiResponse, type TestApp } from '../support/app';
import type { ErrorBody } from '../support/errors';
import { createRunner, installReport } from '../support/fixtures';
import { publishRelease, report } from './support';

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

const RUNNERS_STATEMENT = /^\s*(begin|commit|rollback)\b|cp_runners|cp_releases|es_streams|es_messages|es_idempotency/i;

/** Runs `fn` and returns the SQL text of every statement the app sent meanwhile. */
async function statementsOf(fn: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const proto = Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: Client, ...args: unknown[]): unknown {
    const first = args[0];
    const text = typeof first === 'string' ? first : ((first as QueryConfig | undefined)?.text ?? '');
    if (this !== pg) seen.push(text.replace(/\s+/g, ' ').trim());
    return original.apply(this, args);
  };
  try {
    await fn();
  } finally {
    proto.query = original;
  }
  return seen;
}

/**
 * Background scans that may run meanwhile on their own timers (the intake's disconnect sweep, the
 * maintenance scheduler): not part of the request.
 */
const BACKGROUND = [/"last_heartbeat_time" from "cp_runners"$/i, /"install_status" != \$1$/i];

const runnerStatements = (all: string[]): string[] =>
  all.filter((s) => RUNNERS_STATEMENT.test(s) && !/notify/i.test(s) && !BACKGROUND.some((b) => b.test(s)));

const patchPolicy = (runnerId: string, etag: string, defaultLifetimeSeconds: number) =>
  api<ManagedRunner>(t, 'PATCH', `/v1/sandbox/managedRunners/${runnerId}?updateMask=policy`, {
    token: t.adminToken,
    body: { etag, policy: { constraints: { lifecycle: { defaultLifetimeSeconds } } } },
  });

/** The single statement that appends and updates the row, conditional on the version read. */
function expectOneWriteStatement(statement: string | undefined): void {
  expect(statement).toMatch(/from cp_runners where uid = \$\d+ for update/i);
  expect(statement).toMatch(/update es_streams set stream_position/i);
  expect(statement).toMatch(/insert into es_messages/i);
  expect(statement).toMatch(/update "cp_runners" set .*exists \(select 1 from es_moved\).*returning/i);
}

it('GET of a runner is ONE query; a policy PATCH is one read and one write statement, and ONE write when this process wrote the runner last', async () => {
  const created = await createRunner(t, 'rt-runner', { policy: { constraints: { lifecycle: { defaultLifetimeSeconds: 60 } } } });

  // A runner this process has not written through a PATCH yet: its row is read first.
  let first: ApiResponse<ManagedRunner> | undefined;
  const firstSql = runnerStatements(await statementsOf(async () => {
    first = await patchPolicy('rt-runner', created.body.etag, 99);
  }));
  expect(first?.status).toBe(200);
  expect(firstSql).toHaveLength(2);
  expect(firstSql[0]).toMatch(/from "cp_runners"/i);
  expect(firstSql[0]).not.toMatch(/for update/i);
  expectOneWriteStatement(firstSql[1]);

  // Grow the stream: the PATCH must not read it (its cost does not grow with the history).
  let etag = first?.body.etag ?? '';
  for (let i = 0; i < 20; i++) {
    const r = await patchPolicy('rt-runner', etag, 100 + i);
    expect(r.status).toBe(200);
    etag = r.body.etag;
  }

  let got: ApiResponse<ManagedRunner> | undefined;
  const getSql = runnerStatements(await statementsOf(async () => {
    got = await api<ManagedRunner>(t, 'GET', '/v1/sandbox/managedRunners/rt-runner', { token: t.adminToken });
  }));
  expect(got?.status).toBe(200);
  expect(getSql).toHaveLength(1);
  expect(getSql[0]).toMatch(/from "cp_runners"/i);
  expect(getSql[0]).toMatch(/cp_releases/i);

  // The row the last PATCH wrote is what this one decides from: no read, the write is conditional on its version.
  let patched: ApiResponse<ManagedRunner> | undefined;
  const patchSql = runnerStatements(await statementsOf(async () => {
    patched = await patchPolicy('rt-runner', etag, 7);
  }));
  expect(patched?.status).toBe(200);
  expect(patchSql).toHaveLength(1);
  expectOneWriteStatement(patchSql[0]);
  expect(patchSql.some((s) => /^(begin|commit)/i.test(s))).toBe(false);
  // No statement reads the stream back.
  expect(patchSql.some((s) => /from es_messages/i.test(s) && !/insert/i.test(s))).toBe(false);

  // The PATCH response is what the next GET reads.
  const after = await api<ManagedRunner>(t, 'GET', '/v1/sandbox/managedRunners/rt-runner', { token: t.adminToken });
  expect(after.body).toEqual(patched?.body);
  expect(after.body.etag).not.toBe(etag);
});

it('a stale etag on the fast path is still refused, with nothing appended', async () => {
  await createRunner(t, 'rt-stale');
  const first = await api<ManagedRunner>(t, 'GET', '/v1/sandbox/managedRunners/rt-stale', { token: t.adminToken });
  const ok = await api(t, 'PATCH', '/v1/sandbox/managedRunners/rt-stale?updateMask=policy', {
    token: t.adminToken,
    body: { etag: first.body.etag, policy: { constraints: { lifecycle: { defaultLifetimeSeconds: 5 } } } },
  });
  expect(ok.status).toBe(200);
  const before = await pg.query<{ stream_position: string }>('SELECT stream_position FROM es_streams WHERE stream_id = $1', [`managed_runner-${first.body.uid}`]);
  const stale = await api<ErrorBody>(t, 'PATCH', '/v1/sandbox/managedRunners/rt-stale?updateMask=policy', {
    token: t.adminToken,
    body: { etag: first.body.etag, policy: { constraints: { lifecycle: { defaultLifetimeSeconds: 6 } } } },
  });
  expect(stale.status).toBe(400);
  expect(stale.body.message).toBe('managed_runner.etag is stale; reload the runner and retry');
  const afterStale = await pg.query<{ stream_position: string }>('SELECT stream_position FROM es_streams WHERE stream_id = $1', [`managed_runner-${first.body.uid}`]);
  expect(afterStale.rows[0]?.stream_position).toBe(before.rows[0]?.stream_position);
});

it('the cp_runners row decodes to exactly the fold of the stream (the PATCH path decides from it)', async () => {
  const { clusterId, body } = await createRunner(t, 'rt-fold', { spec: { releaseChannel: 'RELEASE_CHANNEL_STABLE' } });
  const uid = body.uid;
  const compare = async (): Promise<void> => {
    // One snapshot for both reads: the app's connection sweeper may append (DISCONNECTED after 15 s
    // without heartbeats) between two separate statements on a slow machine.
    await pg.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    const { rows } = await pg.query<{ message_type: string; message_data: unknown }>(
      'SELECT message_type, message_data FROM es_messages WHERE stream_id = $1 ORDER BY stream_position',
      [`managed_runner-${uid}`],
    );
    let folded: RunnerState = initialState();
    for (const r of rows) folded = evolve(folded, { type: r.message_type, data: r.message_data } as RunnerEvent);
    const row = (await pg.query<Selectable<RunnersTable>>('SELECT * FROM cp_runners WHERE uid = $1', [uid])).rows[0];
    await pg.query('COMMIT');
    expect(row).toBeDefined();
    expect(runnerStateOfRow(row as Selectable<RunnersTable>)).toEqual(folded);
    expect((row as Selectable<RunnersTable>).stream_version).toBe(rows.length);
  };
  await compare();

  const etag = (await api<ManagedRunner>(t, 'GET', '/v1/sandbox/managedRunners/rt-fold', { token: t.adminToken })).body.etag;
  const edited = await api(t, 'PATCH', '/v1/sandbox/managedRunners/rt-fold?updateMask=display_name,spec.release_channel,policy', {
    token: t.adminToken,
    body: {
      displayName: 'Fold check',
      spec: { releaseChannel: 'RELEASE_CHANNEL_RAPID' },
      policy: { constraints: { lifecycle: { defaultLifetimeSeconds: 42 } } },
      etag,
    },
  });
  expect(edited.status).toBe(200);
  await compare();

  await report(t, installReport(t, 'rt-fold', clusterId, { installStatus: 'RUNNER_INSTALL_STATUS_PROVISIONING', activeRevision: 0, fencingToken: 3 }));
  await report(t, installReport(t, 'rt-fold', clusterId, { installStatus: 'RUNNER_INSTALL_STATUS_READY', activeRevision: 1, fencingToken: 3 }));
  await compare();

  await t.app.get(CommandBus).execute(
    new RecordRunnerConnectionCommand({ organizationId: t.organizationId, runnerId: 'rt-fold', status: 'RUNNER_CONNECTION_STATUS_CONNECTED', at: new Date() }),
  );
  await compare();

  const rapid = await publishRelease(t, 'RELEASE_CHANNEL_RAPID', '9.1.0');
  const before = await api<ManagedRunner>(t, 'GET', '/v1/sandbox/managedRunners/rt-fold', { token: t.adminToken });
  expect(before.body.updateAvailable).toBe(true);
  const applied = await api<ManagedRunner>(t, 'POST', '/v1/sandbox/managedRunners/rt-fold:applyAvailableUpdate', { token: t.adminToken, body: {} });
  expect(applied.status).toBe(200);
  expect(applied.body.targetRevision).toBe(String(rapid));
  expect(applied.body.updateAvailable).toBe(false);
  await compare();

  const deleted = await api(t, 'DELETE', '/v1/sandbox/managedRunners/rt-fold', { token: t.adminToken });
  expect(deleted.status).toBe(200);
  await compare();
});

it('concurrent edits that lose the optimistic race still all land, once each (the locking fallback)', async () => {
  const { body } = await createRunner(t, 'rt-race');
  const writers = 25;
  const results = await Promise.all(
    Array.from({ length: writers }, (_, i) =>
      api<ManagedRunner>(t, 'PATCH', '/v1/sandbox/managedRunners/rt-race?updateMask=display_name', {
        token: t.adminToken,
        body: { displayName: `writer ${i}` },
      }),
    ),
  );
  expect(results.map((r) => r.status)).toEqual(Array.from({ length: writers }, () => 200));
  const { rows } = await pg.query<{ message_type: string; message_data: unknown }>(
    'SELECT message_type, message_data FROM es_messages WHERE stream_id = $1 ORDER BY stream_position',
    [`managed_runner-${body.uid}`],
  );
  const names = rows.flatMap((r) => {
    const data = r.message_data as { displayName?: string; settings?: { displayName?: string } };
    const name = data.settings?.displayName ?? data.displayName;
    return name?.startsWith('writer ') ? [name] : [];
  });
  expect(new Set(names).size).toBe(writers);
  let folded: RunnerState = initialState();
  for (const r of rows) folded = evolve(folded, { type: r.message_type, data: r.message_data } as RunnerEvent);
  const row = (await pg.query<Selectable<RunnersTable>>('SELECT * FROM cp_runners WHERE uid = $1', [body.uid])).rows[0];
  expect(row && runnerStateOfRow(row)).toEqual(folded);
  expect(row?.stream_version).toBe(rows.length);
});

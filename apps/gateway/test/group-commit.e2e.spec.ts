import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { SANDBOX_STATE_RANK } from '@paddock/contracts';
import { createGatewayDb, gatewayPoolOf, type GatewayDatabase, type PlacementRecord } from '../src/db/database';
import { migrateGatewayToLatest } from '../src/db/migrate';
import { GroupCommit } from '../src/db/group-commit';
import { SandboxRepository, type NewSandboxRow } from '../src/sandboxes/sandbox.repository';
import { startInfra, type Infra } from './support/infra';

/**
 * Concurrent creates share statements (group commit) yet each keeps its own row, result and error.
 */
describe('gateway: group commit of concurrent sandbox writes', () => {
  let infra: Infra;
  let db: Kysely<GatewayDatabase>;
  let orgId: string;
  const placement: PlacementRecord = {
    decidedAt: new Date().toISOString(),
    candidates: ['r1'],
    verdicts: [],
    attempts: [],
    winner: null,
  };
  const pending = (over: Partial<NewSandboxRow> = {}): NewSandboxRow => ({
    id: randomUUID(),
    organizationId: orgId,
    requestId: null,
    requestFingerprint: 'f',
    spec: {},
    tags: [],
    runnerId: 'r1',
    runnerGroupId: 'default',
    placement,
    now: new Date(),
    ...over,
  });

  beforeAll(async () => {
    infra = await startInfra();
    db = createGatewayDb(infra.databaseUrl, 4);
    await migrateGatewayToLatest(db);
    orgId = (await infra.cp.createOrganization(`org-${randomUUID().slice(0, 8)}`)).id;
  }, 120_000);

  afterAll(async () => {
    await db?.destroy();
    await infra?.stop();
  });

  it('lands concurrent calls as one statement, each with its own result', async () => {
    const statements: number[] = [];
    const batcher = new GroupCommit<number, number>({
      many: async (ns) => {
        statements.push(ns.length);
        return ns.map((n) => n * 2);
      },
      key: (n) => String(n),
    });
    expect(await Promise.all([1, 2, 3, 4, 5].map((n) => batcher.submit(n)))).toEqual([
      2, 4, 6, 8, 10,
    ]);
    expect(statements).toEqual([5]);
    // Alone, a call is its own statement.
    expect(await batcher.submit(7)).toBe(14);
    expect(statements).toEqual([5, 1]);
  });

  it('never puts two calls with the same key in one statement, and keeps their order', async () => {
    const statements: string[][] = [];
    const batcher = new GroupCommit<string, string>({
      many: async (ss) => {
        statements.push(ss);
        return ss;
      },
      key: (s) => s.slice(0, 1),
    });
    await Promise.all(['a1', 'b1', 'a2', 'c1'].map((s) => batcher.submit(s)));
    expect(statements).toEqual([['a1', 'b1', 'c1'], ['a2']]);
  });

  it('inserts a burst of PENDING rows in one INSERT: each its own row, a reused requestId gets the first row', async () => {
    const repo = new SandboxRepository(db);
    const requestId = `req-${randomUUID()}`;
    const rows = [pending(), pending(), pending({ requestId }), pending({ requestId }), pending()];
    const out = await Promise.all(rows.map((n) => repo.insertPending(n)));
    expect(out.map((o) => o.created)).toEqual([true, true, true, false, true]);
    expect(out.map((o) => o.row.id)).toEqual([
      rows[0]?.id,
      rows[1]?.id,
      rows[2]?.id,
      rows[2]?.id,
      rows[4]?.id,
    ]);
    expect(out.every((o) => o.row.state === 'STATE_PENDING')).toBe(true);
  });

  it('a failing row gets its own error and does not lose the others', async () => {
    const repo = new SandboxRepository(db);
    const existing = pending();
    await repo.insertPending(existing);
    // The same id again violates the primary key: that statement fails, its neighbours land.
    const rows = [pending(), { ...pending(), id: existing.id }, pending()];
    const out = await Promise.allSettled(rows.map((n) => repo.insertPending(n)));
    expect(out.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const found = await Promise.all(rows.map((n) => repo.findAnyById(n.id)));
    expect(found.map((r) => r?.id)).toEqual(rows.map((n) => n.id));
  });

  it('accepts and observes a burst in shared statements with per-row outcomes', async () => {
    const repo = new SandboxRepository(db);
    const rows = [pending(), pending(), pending()];
    await Promise.all(rows.map((n) => repo.insertPending(n)));
    const at = new Date();
    const effective = { effectiveMaxLifetimeSeconds: 600 };
    const accepted = await Promise.all([
      repo.acceptPlacement(
        rows[0]?.id ?? '',
        'r1',
        { ...placement, winner: 'r1' },
        { state: 'STATE_RUNNING', rank: 2, sequence: 0, at, effective },
        at,
      ),
      repo.acceptPlacement(
        rows[1]?.id ?? '',
        'r1',
        { ...placement, winner: 'r1' },
        { state: 'STATE_CREATING', rank: 1, sequence: 0, at },
        at,
      ),
      // Not this runner's row: nothing to accept.
      repo.acceptPlacement(
        rows[2]?.id ?? '',
        'r2',
        { ...placement, winner: 'r2' },
        { state: 'STATE_RUNNING', rank: 2, sequence: 0, at },
        at,
      ),
    ]);
    expect(accepted.map((r) => r?.state)).toEqual(['STATE_RUNNING', 'STATE_CREATING', undefined]);
    expect(accepted[0]?.effective).toEqual(effective);
    expect(accepted[0]?.runner_acknowledged).toBe(true);
    const applied = await Promise.all([
      // Older than what is stored: ignored.
      repo.applyObservation(rows[0]?.id ?? '', 'r1', {
        state: 'STATE_CREATING',
        rank: 1,
        sequence: 3,
        at,
      }),
      repo.applyObservation(rows[1]?.id ?? '', 'r1', {
        state: 'STATE_RUNNING',
        rank: 2,
        sequence: 4,
        at,
        containerStatuses: [],
      }),
      repo.applyObservation(rows[2]?.id ?? '', 'r1', {
        state: 'STATE_FAILED',
        rank: SANDBOX_STATE_RANK.STATE_FAILED,
        sequence: 5,
        at,
        reason: 'EXITED',
        message: 'boom',
        exitCode: 7,
      }),
    ]);
    expect(applied).toEqual([false, true, true]);
    const after = await Promise.all(rows.map((n) => repo.findAnyById(n.id)));
    expect(after.map((r) => r?.state)).toEqual(['STATE_RUNNING', 'STATE_RUNNING', 'STATE_FAILED']);
    expect(after[1]?.state_sequence).toBe(4);
    expect(after[1]?.start_time).not.toBeNull();
    expect(after[1]?.effective).toEqual({ containerStatuses: [] });
    expect([after[2]?.message, after[2]?.exit_code, after[2]?.state_reason]).toEqual([
      'boom',
      7,
      'EXITED',
    ]);
    expect(after[2]?.end_time).not.toBeNull();
  });

  // The create path's two statements run as prepared statements on the pool (PreparedBatch).
  it('runs the prepared statements on the pool behind the handle', () => {
    expect(gatewayPoolOf(db)).toBeDefined();
  });

  it('returns through the prepared statements the rows a read returns, alone and in batches past the named sizes', async () => {
    const repo = new SandboxRepository(db);
    const spec = { containers: [{ image: 'img', env: { B: '1', A: '2' } }] };
    for (const n of [1, 3, 20]) {
      const ns = Array.from({ length: n }, () => pending({ spec, tags: ['t1', 't2'] }));
      const inserted = await Promise.all(ns.map((x) => repo.insertPending(x)));
      for (const { row, created } of inserted) {
        expect(created).toBe(true);
        expect(row).toEqual(await repo.findAnyById(row.id));
      }
      const at = new Date('2026-01-02T03:04:05.678Z');
      const running = { state: 'STATE_RUNNING' as const, rank: 2, sequence: 0, at, effective: { effectiveMaxLifetimeSeconds: 60 } };
      const accepted = await Promise.all(ns.map((x) => repo.acceptPlacement(x.id, 'r1', { ...placement, winner: 'r1' }, running, new Date())));
      for (const row of accepted) {
        expect(row?.state).toBe('STATE_RUNNING');
        expect(row?.start_time).toEqual(at);
        expect(row?.runner_acknowledged).toBe(true);
        expect(row).toEqual(await repo.findAnyById(row?.id ?? ''));
      }
    }
  });

  it('keeps the prepared statements working when a column is added under them (a newer gateway migrated)', async () => {
    const repo = new SandboxRepository(db);
    await Promise.all([repo.insertPending(pending()), repo.insertPending(pending())]);
    await sql`ALTER TABLE gw_sandboxes ADD COLUMN added_later integer`.execute(db);
    try {
      for (let i = 0; i < 4; i++) {
        const { row, created } = await repo.insertPending(pending());
        expect(created).toBe(true);
        const accepted = await repo.acceptPlacement(row.id, 'r1', { ...placement, winner: 'r1' }, { state: 'STATE_CREATING', rank: 1, sequence: 0, at: new Date() }, new Date());
        expect(accepted?.state).toBe('STATE_CREATING');
      }
    } finally {
      await sql`ALTER TABLE gw_sandboxes DROP COLUMN added_later`.execute(db);
    }
  });
});

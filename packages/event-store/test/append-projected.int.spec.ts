import { sql, type Expression, type Kysely, type SqlBool } from 'kysely';
import { EventStore, ExpectedVersionConflictError, type NewEvent } from '../src';
import { settle, usePostgres } from './support';

const pg = usePostgres();
const ev = (type: string, data: unknown = {}): NewEvent => ({ type, data });

interface CounterRow {
  id: string;
  count: number;
  version: number;
}

/** A caller-owned read model: one row per stream, with the stream version it reflects. */
async function counterTable(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE counters (id text PRIMARY KEY, count int NOT NULL, version int NOT NULL)`.execute(db);
}

async function created(store: EventStore<unknown>, db: Kysely<unknown>, id: string): Promise<void> {
  await store.append(id, 'counter', [ev('Created')], { expectedVersion: 'no_stream' });
  await sql`INSERT INTO counters VALUES (${id}, 0, 1)`.execute(db);
}

/** The increment projection: conditional on the move, with the row locked first like a locking writer would. */
function increment(id: string, by: number, version: number) {
  return {
    lockFirst: sql`SELECT id FROM counters WHERE id = ${id} FOR UPDATE`,
    project: (ifAppended: Expression<SqlBool>) => sql<CounterRow>`UPDATE counters SET count = count + ${by}::int, version = ${version}::int
                  WHERE id = ${id} AND ${ifAppended} RETURNING id, count, version`,
  };
}

async function rowOf(db: Kysely<unknown>, id: string): Promise<CounterRow | undefined> {
  return (await sql<CounterRow>`SELECT id, count, version FROM counters WHERE id = ${id}`.execute(db)).rows[0];
}

describe('appendProjected: append and read-model update in one statement', () => {
  it('appends the events and returns the projected row with the positions', async () => {
    const { db } = await pg.fresh();
    await counterTable(db);
    const store = new EventStore(db);
    await created(store, db, 'c-1');

    const out = await store.appendProjected<CounterRow>('c-1', 'counter', [ev('Incremented', { by: 2 }), ev('Incremented', { by: 3 })], {
      expectedVersion: 1,
      ...increment('c-1', 5, 3),
    });

    expect(out.result.streamPosition).toBe(3);
    expect(out.result.globalPositions).toHaveLength(2);
    expect(out.result.transactionId).toMatch(/^\d+$/);
    expect(out.rows).toEqual([{ id: 'c-1', count: 5, version: 3 }]);
    const events = await store.readStream('c-1');
    expect(events.map((e) => [e.streamPosition, e.type])).toEqual([
      [1, 'Created'],
      [2, 'Incremented'],
      [3, 'Incremented'],
    ]);
    expect(events.slice(1).map((e) => e.globalPosition)).toEqual(out.result.globalPositions);
    expect(events[1]?.transactionId).toBe(out.result.transactionId);
  });

  it('writes nothing, neither events nor the row, when the expectation is stale', async () => {
    const { db } = await pg.fresh();
    await counterTable(db);
    const store = new EventStore(db);
    await created(store, db, 'c-2');

    const stale = store.appendProjected<CounterRow>('c-2', 'counter', [ev('Incremented')], { expectedVersion: 7, ...increment('c-2', 1, 8) });

    await expect(stale).rejects.toBeInstanceOf(ExpectedVersionConflictError);
    await expect(stale).rejects.toMatchObject({ expected: 7, actual: 1 });
    expect(await store.readStream('c-2')).toHaveLength(1);
    expect(await rowOf(db, 'c-2')).toEqual({ id: 'c-2', count: 0, version: 1 });
  });

  it('writes nothing when the row locked first is gone (a concurrent removal)', async () => {
    const { db } = await pg.fresh();
    await counterTable(db);
    const store = new EventStore(db);
    await created(store, db, 'c-3');
    await sql`DELETE FROM counters WHERE id = 'c-3'`.execute(db);

    await expect(store.appendProjected('c-3', 'counter', [ev('Incremented')], { expectedVersion: 1, ...increment('c-3', 1, 2) })).rejects.toBeInstanceOf(
      ExpectedVersionConflictError,
    );
    expect(await store.readStream('c-3')).toHaveLength(1);
    expect(await rowOf(db, 'c-3')).toBeUndefined();
  });

  it('lets exactly one of 30 concurrent writers with the same expectation win, and the row says so', async () => {
    const { db } = await pg.fresh();
    await counterTable(db);
    const store = new EventStore(db);
    await created(store, db, 'c-4');

    const { ok, errors } = await settle(
      Array.from({ length: 30 }, (_, i) =>
        store.appendProjected<CounterRow>('c-4', 'counter', [ev('Incremented', { writer: i })], { expectedVersion: 1, ...increment('c-4', 1, 2) }),
      ),
    );

    expect(ok).toHaveLength(1);
    expect(errors).toHaveLength(29);
    expect(errors.every((e) => e instanceof ExpectedVersionConflictError)).toBe(true);
    expect(await store.readStream('c-4')).toHaveLength(2);
    expect(await rowOf(db, 'c-4')).toEqual({ id: 'c-4', count: 1, version: 2 });
  });

  it('removes the row with the append (a projection that deletes)', async () => {
    const { db } = await pg.fresh();
    await counterTable(db);
    const store = new EventStore(db);
    await created(store, db, 'c-5');

    const out = await store.appendProjected<{ id: string }>('c-5', 'counter', [ev('Removed')], {
      expectedVersion: 1,
      project: (ifAppended) => sql<{ id: string }>`DELETE FROM counters WHERE id = 'c-5' AND ${ifAppended} RETURNING id`,
    });

    expect(out.result.streamPosition).toBe(2);
    expect(out.rows).toEqual([{ id: 'c-5' }]);
    expect(await rowOf(db, 'c-5')).toBeUndefined();
    expect((await store.readStream('c-5')).map((e) => e.type)).toEqual(['Created', 'Removed']);
  });

  it('returns the append with no rows when the projection touches none', async () => {
    const { db } = await pg.fresh();
    await counterTable(db);
    const store = new EventStore(db);
    await store.append('c-7', 'counter', [ev('Created')], { expectedVersion: 'no_stream' });

    const out = await store.appendProjected<CounterRow>('c-7', 'counter', [ev('Incremented')], {
      expectedVersion: 1,
      project: (ifAppended) => sql<CounterRow>`UPDATE counters SET count = count + 1 WHERE id = 'c-7' AND ${ifAppended} RETURNING id, count, version`,
    });

    expect(out.result.streamPosition).toBe(2);
    expect(out.rows).toEqual([]);
  });

  it('takes a kysely query builder as the projection, its RETURNING rows typed', async () => {
    const { db } = await pg.fresh();
    await counterTable(db);
    const typed = db as unknown as Kysely<{ counters: CounterRow }>;
    const store = new EventStore(typed);
    await store.append('c-8', 'counter', [ev('Created')], { expectedVersion: 'no_stream' });
    await sql`INSERT INTO counters VALUES ('c-8', 0, 1)`.execute(db);

    const out = await store.appendProjected('c-8', 'counter', [ev('Incremented')], {
      expectedVersion: 1,
      project: (ifAppended) =>
        typed.updateTable('counters').set({ count: 1, version: 2 }).where('id', '=', 'c-8').where(ifAppended).returning(['id', 'count']),
    });

    expect(out.rows).toEqual([{ id: 'c-8', count: 1 }]);
    expect(await rowOf(db, 'c-8')).toEqual({ id: 'c-8', count: 1, version: 2 });
  });

  it('refuses a projection that is not conditional on the append, naming the field, and writes nothing', async () => {
    const { db } = await pg.fresh();
    await counterTable(db);
    const store = new EventStore(db);
    await created(store, db, 'c-9');

    await expect(
      store.appendProjected('c-9', 'counter', [ev('Incremented')], {
        expectedVersion: 1,
        project: () => sql`UPDATE counters SET count = 99 WHERE id = 'c-9' RETURNING id`,
      }),
    ).rejects.toThrow(/project/);
    expect(await store.readStream('c-9')).toHaveLength(1);
    expect(await rowOf(db, 'c-9')).toEqual({ id: 'c-9', count: 0, version: 1 });
  });

  it('refuses lockFirst on an append that would create the stream, naming the field', async () => {
    const { db } = await pg.fresh();
    await counterTable(db);
    const store = new EventStore(db);

    await expect(
      store.appendProjected('c-6', 'counter', [ev('Created')], { expectedVersion: 'no_stream', ...increment('c-6', 1, 1) }),
    ).rejects.toThrow(/expectedVersion/);
    expect(await store.readStream('c-6')).toHaveLength(0);
  });
});

describe('prepared statements', () => {
  it('prepares a parameterised text from its second use and keeps answering correctly', async () => {
    const { db } = await pg.fresh({ max: 1 });
    const read = (n: number) => sql<{ n: number }>`SELECT ${n}::int + 1 AS n`.execute(db);
    expect((await read(1)).rows[0]?.n).toBe(2);
    expect((await read(2)).rows[0]?.n).toBe(3);
    expect((await read(3)).rows[0]?.n).toBe(4);
    const prepared = await sql<{ count: string }>`SELECT count(*)::text AS count FROM pg_prepared_statements WHERE statement LIKE '%+ 1 AS n%'`.execute(db);
    expect(prepared.rows[0]?.count).toBe('1');
  });

  it('survives a migration that changes the columns of a prepared SELECT * (another instance upgrading first)', async () => {
    const { db } = await pg.fresh({ max: 1 });
    await sql`CREATE TABLE things (id int PRIMARY KEY, a text)`.execute(db);
    await sql`INSERT INTO things VALUES (1, 'x')`.execute(db);
    const read = () => sql<Record<string, unknown>>`SELECT * FROM things WHERE id = ${1}`.execute(db);
    await read();
    expect((await read()).rows).toEqual([{ id: 1, a: 'x' }]);
    await sql`ALTER TABLE things ADD COLUMN b text NOT NULL DEFAULT 'y'`.execute(db);
    expect((await read()).rows).toEqual([{ id: 1, a: 'x', b: 'y' }]);
    expect((await read()).rows).toEqual([{ id: 1, a: 'x', b: 'y' }]);
    expect((await read()).rows).toEqual([{ id: 1, a: 'x', b: 'y' }]);
  });

  it('can be turned off', async () => {
    const { db } = await pg.fresh({ max: 1, prepareStatements: false });
    for (let i = 0; i < 3; i++) await sql`SELECT ${i}::int + 2 AS n`.execute(db);
    const prepared = await sql<{ count: string }>`SELECT count(*)::text AS count FROM pg_prepared_statements`.execute(db);
    expect(prepared.rows[0]?.count).toBe('0');
  });
});

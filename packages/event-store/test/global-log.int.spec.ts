import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { EventStore, START_CURSOR, compareCursors, type LogCursor, type NewEvent } from '../src';
import { delay, rng, usePostgres } from './support';

const pg = usePostgres();
const ev = (type: string, data: unknown = {}): NewEvent => ({ type, data });

async function fullScan(db: Kysely<unknown>): Promise<string[]> {
  const { rows } = await sql<{
    id: string;
  }>`SELECT message_id::text AS id FROM es_messages ORDER BY transaction_id, global_position`.execute(
    db,
  );
  return rows.map((r) => r.id);
}

describe('global log below the xid8 horizon', () => {
  it('never hands out an event that a position-only cursor would skip', async () => {
    const { db } = await pg.fresh();
    const store = new EventStore(db);
    const slow = await db.startTransaction().execute();
    const a = await store.append('a', 't', [ev('A')], { expectedVersion: 'any', trx: slow });
    const b = await store.append('b', 't', [ev('B')], { expectedVersion: 'any' });
    expect(BigInt(a.globalPositions[0] ?? 0)).toBeLessThan(BigInt(b.globalPositions[0] ?? 0));

    // The naive consumer: positions only, no horizon. It sees B and moves past A's position.
    const naive = async (after: string): Promise<string[]> =>
      (
        await sql<{
          gp: string;
        }>`SELECT global_position AS gp FROM es_messages WHERE global_position > ${after}::bigint ORDER BY 1`.execute(
          db,
        )
      ).rows.map((r) => r.gp);
    const naiveFirst = await naive('0');
    expect(naiveFirst).toEqual(b.globalPositions);

    const held = await store.readAll({ after: START_CURSOR, limit: 10 });
    expect(held.events).toEqual([]);
    expect(held.heldBackByHorizon).toBe(true);
    // The cursor may jump to the horizon (the open transaction), never past A.
    expect(
      compareCursors(held.cursor, {
        transactionId: a.transactionId,
        globalPosition: a.globalPositions[0] ?? '0',
      }),
    ).toBeLessThan(0);

    await slow.commit().execute();
    expect(await naive(naiveFirst[0] ?? '0')).toEqual([]); // A is lost for the naive consumer
    const after = await store.readAll({ after: held.cursor, limit: 10 });
    expect(after.events.map((e) => e.type)).toEqual(['A', 'B']);
    expect(after.heldBackByHorizon).toBe(false);
  });

  it('filters by type and stream type, and jumps the cursor to the horizon over non-matching rows', async () => {
    const { db } = await pg.fresh();
    const store = new EventStore(db);
    await store.append('x-1', 'x', [ev('Keep'), ev('Drop'), ev('Keep')], { expectedVersion: 0 });
    await store.append('y-1', 'y', [ev('Keep')], { expectedVersion: 0 });
    const byType = await store.readAll({ limit: 10, types: ['Keep'] });
    expect(byType.events.map((e) => `${e.streamId}:${e.streamPosition}`)).toEqual([
      'x-1:1',
      'x-1:3',
      'y-1:1',
    ]);
    const byStream = await store.readAll({ limit: 10, streamTypes: ['y'] });
    expect(byStream.events.map((e) => e.streamId)).toEqual(['y-1']);
    const none = await store.readAll({ limit: 10, types: ['Nothing'] });
    expect(none.events).toEqual([]);
    expect(
      compareCursors(none.cursor, {
        transactionId: byType.events[2]?.transactionId ?? '0',
        globalPosition: byType.events[2]?.globalPosition ?? '0',
      }),
    ).toBe(1);
    expect((await store.readAll({ after: none.cursor, limit: 10 })).events).toEqual([]);
    const paged = await store.readAll({ limit: 2 });
    expect(paged.events).toHaveLength(2);
    expect(paged.cursor).toEqual({
      transactionId: paged.events[1]?.transactionId,
      globalPosition: paged.events[1]?.globalPosition,
    });
  });

  it('CP-5: concurrent writers with pauses, rollbacks and held transactions; consumers with batch 1, 7 and 500 see every committed event exactly once, in order', async () => {
    const soak = process.env.PADDOCK_SOAK === '1';
    const transactions = soak ? 100_000 : 5_000;
    const writers = 16;
    const { db } = await pg.fresh({ max: writers + 8 });
    const store = new EventStore(db, { notify: false });
    const random = rng(Number(process.env.PADDOCK_SEED ?? 20261129));
    console.log(
      `CP-5 seed ${process.env.PADDOCK_SEED ?? 20261129}, ${transactions} transactions, ${writers} writers`,
    );

    const committed = new Set<string>();
    const rolledBack = new Set<string>();
    let issued = 0;
    let held = 0;
    class Rollback extends Error {}

    const writer = async (w: number): Promise<void> => {
      while (issued < transactions) {
        const i = issued++;
        const roll = random();
        const count = roll < 0.8 ? 1 : 1 + Math.floor(random() * 3);
        const ids = Array.from({ length: count }, () => randomUUID());
        const pauseMs = roll < 0.01 ? 1000 + random() * 2000 : random() * 5;
        if (roll < 0.01) held++;
        try {
          await db.transaction().execute(async (trx) => {
            await store.append(
              `w${w}-${i % 7}`,
              'gap',
              ids.map((messageId, k) => ({ type: 'Tick', data: { i, k }, messageId })),
              { expectedVersion: 'any', trx },
            );
            await delay(pauseMs);
            if (roll >= 0.01 && roll < 0.11) throw new Rollback();
          });
          for (const id of ids) committed.add(id);
        } catch (e) {
          if (!(e instanceof Rollback)) throw e;
          for (const id of ids) rolledBack.add(id);
        }
      }
    };

    let writersDone = false;
    const consumer = async (batch: number): Promise<{ ids: string[]; cursors: LogCursor[] }> => {
      const ids: string[] = [];
      const cursors: LogCursor[] = [];
      let after = START_CURSOR;
      for (;;) {
        const doneBeforeRead = writersDone;
        const page = await store.readAll({ after, limit: batch });
        for (const e of page.events) {
          ids.push(e.messageId);
          cursors.push({ transactionId: e.transactionId, globalPosition: e.globalPosition });
        }
        after = page.cursor;
        if (page.events.length === 0) {
          if (doneBeforeRead && !page.heldBackByHorizon) return { ids, cursors };
          await delay(5);
        }
      }
    };

    const started = Date.now();
    const consumers = [1, 7, 500].map((b) => consumer(b));
    await Promise.all(Array.from({ length: writers }, (_, w) => writer(w)));
    writersDone = true;
    const seen = await Promise.all(consumers);
    const scan = await fullScan(db);
    console.log(
      `CP-5: ${committed.size} committed events, ${rolledBack.size} rolled back, ${held} held transactions, ${Date.now() - started} ms`,
    );

    expect(scan).toHaveLength(committed.size);
    expect(new Set(scan)).toEqual(committed);
    expect(rolledBack.size).toBeGreaterThan(0);
    expect(held).toBeGreaterThan(0);
    for (const [k, { ids, cursors }] of seen.entries()) {
      const label = `consumer with batch ${[1, 7, 500][k]}`;
      expect(ids.length, label).toBe(scan.length);
      expect(new Set(ids).size, label).toBe(ids.length); // exactly once
      expect(
        ids.filter((id) => rolledBack.has(id)),
        label,
      ).toEqual([]);
      expect(ids, label).toEqual(scan); // no skip, same order as the final scan
      for (let j = 1; j < cursors.length; j++) {
        expect(
          compareCursors(cursors[j - 1] as LogCursor, cursors[j] as LogCursor),
          label,
        ).toBeLessThan(0);
      }
    }
  }, 240_000);
});

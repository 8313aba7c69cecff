import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { waitFor } from '@paddock/testing';
import { EventStore } from '../src';
import { delay, usePostgres } from './support';

const pg = usePostgres();

describe('CP-8: Postgres killed mid-append', () => {
  it('with idempotency keys and retries: every acknowledged append is present once, unknown outcomes 0 or 1 times, no duplicates', async () => {
    const crashes = process.env.PADDOCK_SOAK === '1' ? 20 : 3;
    const { db } = await pg.fresh({ max: 8 });
    const store = new EventStore(db);
    const acked = new Set<string>();
    const unknown = new Set<string>();
    let stop = false;
    let retries = 0;
    let replayedAfterFailure = 0;

    const writer = async (w: number): Promise<void> => {
      while (!stop) {
        const key = randomUUID();
        let done = false;
        for (let attempt = 0; attempt < 200 && !done; attempt++) {
          try {
            // A fresh messageId per attempt: only the idempotency key can prevent a duplicate.
            const r = await store.append(
              `c-${w}`,
              'crash',
              [{ type: 'Op', data: { key }, messageId: randomUUID() }],
              {
                expectedVersion: 'any',
                idempotency: { key, requestHash: 'h' },
              },
            );
            if (r.replayed && attempt > 0) replayedAfterFailure++; // committed, but the ack was lost
            done = true;
          } catch {
            retries++;
            await delay(25);
          }
        }
        if (done) acked.add(key);
        else unknown.add(key);
      }
    };
    const writers = Array.from({ length: 4 }, (_, w) => writer(w));
    for (let c = 0; c < crashes; c++) {
      const target = acked.size + 25;
      await waitFor(() => acked.size >= target, {
        timeoutMs: 60_000,
        what: `progress before crash ${c}`,
      });
      pg.server().crash();
      pg.server().start();
    }
    await waitFor(() => acked.size >= 25 * (crashes + 1), {
      timeoutMs: 60_000,
      what: 'progress after the last crash',
    });
    stop = true;
    await Promise.all(writers);

    const { rows } = await sql<{ key: string; n: string }>`
      SELECT message_data->>'key' AS key, count(*) AS n FROM es_messages GROUP BY 1`.execute(db);
    const counts = new Map(rows.map((r) => [r.key, Number(r.n)]));
    const duplicates = rows.filter((r) => Number(r.n) > 1);
    console.log(
      `CP-8: ${crashes} crashes, ${acked.size} acknowledged, ${unknown.size} unknown, ${retries} retried attempts, ${replayedAfterFailure} lost acks resolved by replay, ${duplicates.length} duplicates`,
    );
    expect(retries).toBeGreaterThan(0); // the crashes really interrupted appends
    expect(duplicates).toEqual([]);
    for (const key of acked) expect(counts.get(key), `acknowledged ${key}`).toBe(1);
    for (const key of unknown) {
      const n = counts.get(key) ?? 0;
      expect(n).toBeLessThanOrEqual(1);
      // Unknown outcomes are resolved by key lookup.
      expect((await store.findIdempotent(key)) !== undefined).toBe(n === 1);
    }
  }, 240_000);
});

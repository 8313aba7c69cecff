import { randomUUID } from 'node:crypto';
import { PaddockError } from '@paddock/contracts';
import {
  EventStore,
  ExpectedVersionConflictError,
  IdempotencyConflictError,
  type NewEvent,
  type RecordedEvent,
} from '../src';
import { settle, usePostgres } from './support';

const pg = usePostgres();
const ev = (type: string, data: unknown = {}): NewEvent => ({ type, data });

interface Counter {
  count: number;
}
const counter = {
  initialState: (): Counter => ({ count: 0 }),
  evolve: (s: Counter, e: RecordedEvent): Counter =>
    e.type === 'Incremented' ? { count: s.count + 1 } : s,
};

async function countMessages(
  store: { readStream(id: string): Promise<RecordedEvent[]> },
  id: string,
): Promise<number> {
  return (await store.readStream(id)).length;
}

describe('append with an expected version', () => {
  it('appends in order, reports positions and reads the stream back', async () => {
    const { db } = await pg.fresh();
    const store = new EventStore(db);
    const first = await store.append(
      's-1',
      'thing',
      [ev('Created', { a: [1, 2] }), ev('Renamed', { n: 'x' })],
      { expectedVersion: 0 },
    );
    expect(first.streamPosition).toBe(2);
    expect(first.globalPositions).toHaveLength(2);
    expect(BigInt(first.globalPositions[1] ?? '0')).toBeGreaterThan(
      BigInt(first.globalPositions[0] ?? '0'),
    );
    expect(first.replayed).toBe(false);
    const second = await store.append('s-1', 'thing', [ev('Renamed', { n: 'y' })], {
      expectedVersion: 2,
    });
    expect(second.streamPosition).toBe(3);
    expect(BigInt(second.transactionId)).toBeGreaterThan(BigInt(first.transactionId));
    const events = await store.readStream('s-1');
    expect(events.map((e) => [e.streamPosition, e.type, e.data])).toEqual([
      [1, 'Created', { a: [1, 2] }],
      [2, 'Renamed', { n: 'x' }],
      [3, 'Renamed', { n: 'y' }],
    ]);
    expect(events[0]?.streamType).toBe('thing');
    expect(events[0]?.schemaVersion).toBe(1);
    expect(events[0]?.createdAt).toBeInstanceOf(Date);
    expect(await store.readStream('s-1', { fromPosition: 3 })).toHaveLength(1);
  });

  it('refuses a stale expected version with a typed error naming the field, and appends nothing', async () => {
    const { db } = await pg.fresh();
    const store = new EventStore(db);
    await store.append('s-2', 'thing', [ev('A'), ev('B')], { expectedVersion: 'no_stream' });
    const err = await store
      .append('s-2', 'thing', [ev('C')], { expectedVersion: 1 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ExpectedVersionConflictError);
    expect(err).toBeInstanceOf(PaddockError);
    const conflict = err as ExpectedVersionConflictError;
    expect(conflict).toMatchObject({ streamId: 's-2', expected: 1, actual: 2, code: 'aborted' });
    expect(conflict.violations[0]).toMatchObject({
      field: 'expectedVersion',
      rule: 'must equal the current stream version',
    });
    expect(await countMessages(store, 's-2')).toBe(2);
  });

  it('implements any, no_stream, stream_exists and 0', async () => {
    const { db } = await pg.fresh();
    const store = new EventStore(db);
    await expect(
      store.append('s-3', 't', [ev('A')], { expectedVersion: 'stream_exists' }),
    ).rejects.toMatchObject({ actual: 0 });
    expect(
      (await store.append('s-3', 't', [ev('A')], { expectedVersion: 'any' })).streamPosition,
    ).toBe(1);
    await expect(
      store.append('s-3', 't', [ev('B')], { expectedVersion: 'no_stream' }),
    ).rejects.toBeInstanceOf(ExpectedVersionConflictError);
    await expect(
      store.append('s-3', 't', [ev('B')], { expectedVersion: 0 }),
    ).rejects.toBeInstanceOf(ExpectedVersionConflictError);
    expect(
      (await store.append('s-3', 't', [ev('B')], { expectedVersion: 'stream_exists' }))
        .streamPosition,
    ).toBe(2);
    expect(
      (await store.append('s-3', 't', [ev('C'), ev('D')], { expectedVersion: 'any' }))
        .streamPosition,
    ).toBe(4);
  });

  it('lets exactly one of 50 concurrent appends with the same expected version win', async () => {
    const { db } = await pg.fresh({ max: 50 });
    const store = new EventStore(db);
    await store.append('race', 't', [ev('Created')], { expectedVersion: 0 });
    const rounds = 3;
    for (let round = 0; round < rounds; round++) {
      const base = 1 + round;
      const { ok, errors } = await settle(
        Array.from({ length: 50 }, (_, i) =>
          store.append('race', 't', [ev('Incremented', { racer: i })], { expectedVersion: base }),
        ),
      );
      expect(ok).toHaveLength(1);
      expect(errors).toHaveLength(49);
      for (const e of errors) expect(e).toBeInstanceOf(ExpectedVersionConflictError);
      expect(ok[0]?.streamPosition).toBe(base + 1);
    }
    expect(await countMessages(store, 'race')).toBe(1 + rounds);
  });

  it('lets exactly one of 50 concurrent creators of a new stream win', async () => {
    const { db } = await pg.fresh({ max: 50 });
    const store = new EventStore(db);
    const { ok, errors } = await settle(
      Array.from({ length: 50 }, () =>
        store.append('fresh', 't', [ev('Created')], { expectedVersion: 'no_stream' }),
      ),
    );
    expect(ok).toHaveLength(1);
    expect(errors.every((e) => e instanceof ExpectedVersionConflictError)).toBe(true);
    expect(await countMessages(store, 'fresh')).toBe(1);
  });

  it('validates arguments with errors that name the field and the rule', async () => {
    const { db } = await pg.fresh();
    const store = new EventStore(db);
    await expect(store.append('s', 't', [], { expectedVersion: 'any' })).rejects.toMatchObject({
      code: 'invalid_argument',
      violations: [{ field: 'events', rule: 'must contain at least 1 event' }],
    });
    await expect(
      store.append('s', 't', [{ type: 'X', data: 1, schemaVersion: 0 }], {
        expectedVersion: 'any',
      }),
    ).rejects.toMatchObject({
      violations: [{ field: 'events[0].schemaVersion' }],
    });
    await expect(store.append('s', 't', [ev('X')], { expectedVersion: -1 })).rejects.toMatchObject({
      violations: [{ field: 'expectedVersion' }],
    });
    const id = randomUUID();
    await store.append('s', 't', [{ ...ev('X'), messageId: id }], { expectedVersion: 'any' });
    await expect(
      store.append('s2', 't', [{ ...ev('X'), messageId: id }], { expectedVersion: 'any' }),
    ).rejects.toMatchObject({
      code: 'already_exists',
    });
    expect(await countMessages(store, 's2')).toBe(0);
  });
});

describe('idempotency keys', () => {
  it('replays the first result for a retried append and appends nothing', async () => {
    const { db } = await pg.fresh();
    const store = new EventStore(db);
    const idempotency = { key: 'req-1', requestHash: 'h1', result: { id: 'sbx-1' } };
    const first = await store.append('i-1', 't', [ev('Created')], {
      expectedVersion: 'no_stream',
      idempotency,
    });
    expect(first).toMatchObject({ replayed: false, streamPosition: 1, result: { id: 'sbx-1' } });
    // The retry would conflict on its expected version, but the key short-circuits first.
    const retry = await store.append('i-1', 't', [ev('Created')], {
      expectedVersion: 'no_stream',
      idempotency: { ...idempotency, result: { id: 'other' } },
    });
    expect(retry).toEqual({ ...first, replayed: true });
    expect(await countMessages(store, 'i-1')).toBe(1);
    expect(await store.findIdempotent('req-1')).toEqual({
      streamId: 'i-1',
      result: { id: 'sbx-1' },
      requestHash: 'h1',
    });
    expect(await store.findIdempotent('unknown')).toBeUndefined();
  });

  it('refuses the same key with a different request hash', async () => {
    const { db } = await pg.fresh();
    const store = new EventStore(db);
    await store.append('i-2', 't', [ev('Created')], {
      expectedVersion: 'any',
      idempotency: { key: 'k', requestHash: 'a' },
    });
    const err = await store
      .append('i-2', 't', [ev('Created')], {
        expectedVersion: 'any',
        idempotency: { key: 'k', requestHash: 'b' },
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IdempotencyConflictError);
    expect((err as IdempotencyConflictError).violations[0]?.field).toBe('idempotency.key');
    expect(await countMessages(store, 'i-2')).toBe(1);
  });

  it('appends once for 30 concurrent appends with the same key', async () => {
    const { db } = await pg.fresh({ max: 30 });
    const store = new EventStore(db);
    const { ok, errors } = await settle(
      Array.from({ length: 30 }, (_, i) =>
        store.append('i-3', 't', [ev('Incremented', { i })], {
          expectedVersion: 'any',
          idempotency: { key: 'same', requestHash: 'h', result: { winner: i } },
        }),
      ),
    );
    expect(errors).toEqual([]);
    expect(ok.filter((r) => !r.replayed)).toHaveLength(1);
    const winner = ok.find((r) => !r.replayed);
    for (const r of ok) expect(r.result).toEqual(winner?.result);
    expect(await countMessages(store, 'i-3')).toBe(1);
  });

  it('releases the key when the append fails, so a corrected retry can use it', async () => {
    const { db } = await pg.fresh();
    const store = new EventStore(db);
    await store.append('i-4', 't', [ev('Created')], { expectedVersion: 0 });
    await expect(
      store.append('i-4', 't', [ev('X')], { expectedVersion: 0, idempotency: { key: 'k4' } }),
    ).rejects.toBeInstanceOf(ExpectedVersionConflictError);
    expect(await store.findIdempotent('k4')).toBeUndefined();
    expect(
      (
        await store.append('i-4', 't', [ev('X')], {
          expectedVersion: 1,
          idempotency: { key: 'k4' },
        })
      ).replayed,
    ).toBe(false);
  });
});

describe('caller transactions', () => {
  it('joins the caller transaction when given one', async () => {
    const { db } = await pg.fresh();
    const store = new EventStore(db);
    await expect(
      db.transaction().execute(async (trx) => {
        await store.append('t-1', 't', [ev('A')], { expectedVersion: 0, trx });
        expect(await store.readStream('t-1', { trx })).toHaveLength(1);
        throw new Error('caller aborts');
      }),
    ).rejects.toThrow('caller aborts');
    expect(await countMessages(store, 't-1')).toBe(0);
    await store.transaction((trx) =>
      store.append('t-1', 't', [ev('A')], { expectedVersion: 0, trx }),
    );
    expect(await countMessages(store, 't-1')).toBe(1);
  });
});

describe('aggregate', () => {
  it('folds a stream into state and reports the position of its last event (0 when empty)', async () => {
    const { db } = await pg.fresh();
    const store = new EventStore(db);
    expect(await store.aggregate('f-1', counter)).toEqual({ state: { count: 0 }, version: 0 });
    await store.append('f-1', 'counter', [ev('Incremented'), ev('Renamed'), ev('Incremented')], {
      expectedVersion: 'no_stream',
    });
    expect(await store.aggregate('f-1', counter)).toEqual({ state: { count: 2 }, version: 3 });
  });
});

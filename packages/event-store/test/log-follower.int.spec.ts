import { sql } from 'kysely';
import { EventStore, LogFollower, createPostgresDb, readPositions, type LogPosition, type NewEvent } from '../src';
import { waitFor } from '@paddock/testing';
import { usePostgres } from './support';

const pg = usePostgres();
const ev = (type: string): NewEvent => ({ type, data: { secret: type } });

/** A view of the log for one stream type, without payloads (what a restricted reader gets). */
const VIEW = sql`CREATE VIEW t_log AS SELECT global_position, transaction_id, stream_id AS stream FROM es_messages WHERE stream_type = 't'`;

const until = (what: string, done: () => boolean): Promise<true> => waitFor(() => done() || undefined, { intervalMs: 5, what });

describe('LogFollower: a view of the log, cursor in memory', () => {
  it('starts at the horizon, hands out rows in log order, and holds back behind an open transaction', async () => {
    const { db } = await pg.fresh();
    await VIEW.execute(db);
    const store = new EventStore(db);
    await store.append('before', 't', [ev('Before')], { expectedVersion: 'any' });
    const seen: LogPosition[] = [];
    const follower = new LogFollower(db, { relation: 't_log', columns: ['stream'], pollIntervalMs: 50, handle: (ps) => void seen.push(...ps) });
    await follower.start();
    try {
      const slow = await db.startTransaction().execute();
      await store.append('a', 't', [ev('A')], { expectedVersion: 'any', trx: slow });
      await store.append('b', 't', [ev('B')], { expectedVersion: 'any' });
      await store.append('other', 'u', [ev('Other')], { expectedVersion: 'any' });
      // B is committed, but A's open transaction is older: B must wait for it, never pass it.
      await until('a read held back by the open transaction', () => follower.stats.heldReads > 0);
      expect(seen).toEqual([]);
      await slow.commit().execute();
      await until('both rows', () => seen.length >= 2);
      expect(seen.map((p) => p.columns.stream)).toEqual(['a', 'b']);
      expect(seen.every((p) => Object.keys(p.columns).join() === 'stream')).toBe(true);
    } finally {
      await follower.stop();
    }
    expect(follower.isRunning).toBe(false);
  });

  it('needs nothing but SELECT on the view: it reads and follows as a role that can write nothing', async () => {
    const { url, db } = await pg.fresh();
    await VIEW.execute(db);
    const role = `reader_${process.pid}_${Date.now()}`;
    await sql`CREATE ROLE ${sql.id(role)} LOGIN`.execute(db);
    await sql`GRANT SELECT ON t_log TO ${sql.id(role)}`.execute(db);
    const asReader = new URL(url);
    asReader.username = role;
    const reader = createPostgresDb<unknown>(asReader.toString(), { max: 2 });
    const store = new EventStore(db);
    try {
      await expect(sql`SELECT message_data FROM es_messages`.execute(reader)).rejects.toThrow(/permission denied/);
      await store.append('x', 't', [ev('X')], { expectedVersion: 'any' });
      const first = await readPositions(reader, { relation: 't_log', columns: ['stream'], limit: 10 });
      expect(first.positions.map((p) => p.columns.stream)).toEqual(['x']);
      const seen: string[] = [];
      const follower = new LogFollower(reader, { relation: 't_log', columns: ['stream'], handle: (ps) => void seen.push(...ps.map((p) => String(p.columns.stream))) });
      await follower.start();
      try {
        await store.append('y', 't', [ev('Y')], { expectedVersion: 'any' });
        await until('the row appended after start', () => seen.length > 0);
        expect(seen).toEqual(['y']);
      } finally {
        await follower.stop();
      }
    } finally {
      await reader.destroy();
      await sql`DROP OWNED BY ${sql.id(role)}`.execute(db);
      await sql`DROP ROLE ${sql.id(role)}`.execute(db);
    }
  });
});

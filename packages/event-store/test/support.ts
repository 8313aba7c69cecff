import type { Kysely } from 'kysely';
import { startPostgres, type ThrowawayPostgres } from '@paddock/testing';
import { createPostgresDb, migrateEventStore, type PostgresDbOptions } from '../src';

/**
 * One throwaway Postgres server per test file; each test gets a fresh database cloned from a
 * migrated template, so tests never see each other's rows.
 */
export function usePostgres(settings?: Record<string, string>): {
  fresh(opts?: PostgresDbOptions): Promise<{ url: string; db: Kysely<unknown> }>;
  server(): ThrowawayPostgres;
} {
  let pg: ThrowawayPostgres | undefined;
  const open: Kysely<unknown>[] = [];
  let n = 0;
  beforeAll(async () => {
    pg = await startPostgres(settings ? { settings } : {});
    const url = await pg.createDatabase('template_es');
    const db = createPostgresDb(url);
    await migrateEventStore(db);
    await db.destroy();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((db) => db.destroy()));
  });
  afterAll(() => {
    pg?.stop();
  });
  return {
    server() {
      if (!pg) throw new Error('postgres not started');
      return pg;
    },
    async fresh(opts) {
      if (!pg) throw new Error('postgres not started');
      const url = await pg.createDatabase(`t${process.pid}_${++n}`, 'template_es');
      const db = createPostgresDb<unknown>(url, { max: 20, ...opts });
      open.push(db);
      return { url, db };
    },
  };
}

/** Settles every promise and splits outcomes (for races). */
export async function settle<T>(ps: Promise<T>[]): Promise<{ ok: T[]; errors: unknown[] }> {
  const rs = await Promise.allSettled(ps);
  return {
    ok: rs.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])),
    errors: rs.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : [])),
  };
}

/** A deterministic PRNG (mulberry32) so failing runs can be replayed by seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

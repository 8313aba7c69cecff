// Event store benchmarks, each figure beside a floor measured on the same throwaway server in
// the same run:  pnpm bench   (RUNS=3 DUR_MS=2000 by default)
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { sql } from 'kysely';
import {
  latencyStats,
  medianOf,
  report,
  row,
  startPostgres,
  timeSequential,
  type BenchRow,
} from '@paddock/testing';
import { EventStore, LogWaker, Processor, createPostgresDb, migrateEventStore } from '../src';

const RUNS = Number(process.env.RUNS ?? 3);
const DUR_MS = Number(process.env.DUR_MS ?? 2000);
const payload = {
  sandboxId: 'sbx_0123456789abcdef',
  image: 'python:3.12',
  cpu: 1,
  memoryMb: 512,
  labels: { team: 'x' },
};

/** Runs `workers` loops of `op` for DUR_MS; returns operations per second. */
async function throughput(
  workers: number,
  op: (worker: number, i: number) => Promise<void>,
): Promise<number> {
  let n = 0;
  const end = performance.now() + DUR_MS;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (let i = 0; performance.now() < end; i++) {
        await op(w, i);
        n++;
      }
    }),
  );
  return n / ((performance.now() - t0) / 1000);
}

async function repeat(fn: () => Promise<number>): Promise<number[]> {
  const out: number[] = [];
  for (let r = 0; r < RUNS; r++) out.push(await fn());
  return out;
}

async function main(): Promise<void> {
  const pg = await startPostgres();
  try {
    const url = await pg.createDatabase('bench');
    const db = createPostgresDb<unknown>(url, { max: 10 });
    await migrateEventStore(db);
    const clients = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const c = new Client({ connectionString: url });
        await c.connect();
        return c;
      }),
    );
    const c0 = clients[0] as Client;
    // The floor table has the shape of a bare append: jsonb payload, unique (stream, version), bigserial.
    await c0.query(
      `CREATE TABLE floor_events (position bigserial, stream_id text, version int, type text, data jsonb, UNIQUE (stream_id, version))`,
    );
    const body = JSON.stringify(payload);
    let seq = 0;
    const bareInsert = (c: Client): Promise<unknown> =>
      c.query('INSERT INTO floor_events (stream_id, version, type, data) VALUES ($1, 1, $2, $3)', [
        `f-${++seq}`,
        'SandboxRequested',
        body,
      ]);

    const rows: BenchRow[] = [];

    // Floors.
    const selectRuns = await repeat(
      async () => latencyStats(await timeSequential(() => c0.query('SELECT 1'), 2000)).p50,
    );
    const select1 = { name: 'bare SELECT 1 p50', median: medianOf(selectRuns) };
    rows.push(row('floor: SELECT 1 round trip p50', 'ms', selectRuns));
    const insert1Runs = await repeat(() =>
      throughput(1, () => bareInsert(c0).then(() => undefined)),
    );
    const insert1 = { name: 'bare INSERT 1 conn', median: medianOf(insert1Runs) };
    rows.push(row('floor: single-row INSERT commit, 1 conn', 'commits/s', insert1Runs));
    const insert8Runs = await repeat(() =>
      throughput(8, (w) => bareInsert(clients[w] as Client).then(() => undefined)),
    );
    const insert8 = { name: 'bare INSERT 8 conns', median: medianOf(insert8Runs) };
    rows.push(row('floor: single-row INSERT commit, 8 conns', 'commits/s', insert8Runs));

    // Appends: one event per transaction with an exact expected version (the command-handler shape).
    const quiet = new EventStore(db, { notify: false });
    const nudging = new EventStore(db);
    const appendRuns = async (store: EventStore<unknown>, workers: number): Promise<number[]> =>
      repeat(async () => {
        const run = randomUUID().slice(0, 8);
        const versions = new Array<number>(workers).fill(0);
        return throughput(workers, async (w) => {
          await store.append(
            `a-${run}-${w}`,
            'bench',
            [{ type: 'SandboxRequested', data: payload }],
            { expectedVersion: versions[w] ?? 0 },
          );
          versions[w] = (versions[w] ?? 0) + 1;
        });
      });
    rows.push(
      row('append 1 event/txn, 1 conn', 'appends/s', await appendRuns(quiet, 1), {
        floor: insert1,
      }),
    );
    rows.push(
      row('append 1 event/txn, 8 conns', 'appends/s', await appendRuns(quiet, 8), {
        floor: insert8,
      }),
    );
    rows.push(
      row(
        'append 1 event/txn, 8 conns, coalesced post-commit nudge on',
        'appends/s',
        await appendRuns(nudging, 8),
        {
          floor: insert8,
          note: 'NOTIFY inside each txn measured 0.42x of the floor',
        },
      ),
    );

    // readAll: drain the whole log in pages of 500, horizon-safe.
    const total = Number(
      (await sql<{ n: string }>`SELECT count(*) AS n FROM es_messages`.execute(db)).rows[0]?.n ?? 0,
    );
    const readRuns = await repeat(async () => {
      const t0 = performance.now();
      let cursor = undefined as undefined | { transactionId: string; globalPosition: string };
      let n = 0;
      for (;;) {
        const page = await quiet.readAll({ ...(cursor ? { after: cursor } : {}), limit: 500 });
        n += page.events.length;
        cursor = page.cursor;
        if (page.events.length < 500) break;
      }
      return n / ((performance.now() - t0) / 1000);
    });
    const bareReadRuns = await repeat(async () => {
      const t0 = performance.now();
      let after = '0';
      let n = 0;
      for (;;) {
        const r = await c0.query<{ global_position: string }>(
          'SELECT * FROM es_messages WHERE global_position > $1 ORDER BY global_position LIMIT 500',
          [after],
        );
        n += r.rows.length;
        after = r.rows[r.rows.length - 1]?.global_position ?? after;
        if (r.rows.length < 500) break;
      }
      return n / ((performance.now() - t0) / 1000);
    });
    const bareRead = {
      name: 'bare keyset SELECT by position, pages of 500',
      median: medianOf(bareReadRuns),
    };
    rows.push(
      row('floor: bare keyset read (no horizon), pages of 500', 'events/s', bareReadRuns, {
        note: `${total} events`,
      }),
    );
    rows.push(
      row('readAll below the xid8 horizon, pages of 500', 'events/s', readRuns, {
        floor: bareRead,
        note: `${total} events`,
      }),
    );

    // Commit -> processor wake latency (poll interval 5 s, so every sample is a wake-up), for a
    // processor sharing the writer's waker (in process) and one on its own listener connection
    // (as another process would be: woken by the coalesced NOTIFY).
    const wakeLatency = async (remote: boolean): Promise<{ p50: number[]; p99: number[] }> => {
      const wakeP50: number[] = [];
      const wakeP99: number[] = [];
      const remoteWaker = remote ? new LogWaker({ connectionString: url }) : undefined;
      for (let r = 0; r < RUNS; r++) {
        const seen = new Map<string, number>();
        const waiters = new Map<string, () => void>();
        const processor = new Processor(db, {
          processorId: `wake-${remote ? 'remote' : 'local'}-${r}`,
          ...(remoteWaker ? { waker: remoteWaker } : {}),
          pollIntervalMs: 5_000,
          types: ['Wake'],
          handle: async (_trx, events) => {
            const now = performance.now();
            for (const e of events) {
              seen.set(e.messageId, now);
              waiters.get(e.messageId)?.();
            }
          },
        });
        await processor.start();
        await processor.whenCaughtUp(30_000);
        const samples: number[] = [];
        for (let i = 0; i < 200; i++) {
          const id = randomUUID();
          const handled = new Promise<void>((resolve) => waiters.set(id, resolve));
          await nudging.append(`wake-${r}`, 'bench', [{ type: 'Wake', data: {}, messageId: id }], {
            expectedVersion: 'any',
          });
          const committed = performance.now();
          await handled;
          samples.push(Math.max(0, (seen.get(id) ?? committed) - committed));
        }
        await processor.stop();
        const s = latencyStats(samples);
        wakeP50.push(s.p50);
        wakeP99.push(s.p99);
      }
      await remoteWaker?.close();
      return { p50: wakeP50, p99: wakeP99 };
    };
    for (const remote of [false, true]) {
      const w = await wakeLatency(remote);
      const where = remote ? 'other connection (NOTIFY)' : 'same process';
      const note = 'includes the read and BEGIN before handle()';
      rows.push(
        row(`commit -> processor wake p50, ${where}`, 'ms', w.p50, { floor: select1, note }),
      );
      rows.push(
        row(`commit -> processor wake p99, ${where}`, 'ms', w.p99, { floor: select1, note }),
      );
    }

    report('event-store', rows);
    await Promise.all(clients.map((c) => c.end()));
    await db.destroy();
  } finally {
    pg.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

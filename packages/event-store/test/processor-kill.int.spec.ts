import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { waitFor } from '@paddock/testing';
import { EventStore, type NewEvent } from '../src';
import {
  auditCheckpoints,
  checkpointRegressions,
  createEffectsTable,
  effectsVersusFold,
} from './effects';
import { rng, usePostgres } from './support';

const pg = usePostgres();
const packageDir = join(__dirname, '..');
const children = new Set<ChildProcess>();

afterEach(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  children.clear();
});

interface Child {
  child: ChildProcess;
  started: () => boolean;
  /** Lets a pre-spawned (already loaded) child start its processor. */
  go: () => void;
  exited: Promise<void>;
}

function spawnChild(url: string, processorId: string): Child {
  const child = spawn(
    process.execPath,
    [
      '--conditions=@paddock/source',
      '--import',
      'tsx',
      join(__dirname, 'fixtures', 'run-processor.ts'),
      url,
      processorId,
    ],
    {
      cwd: packageDir,
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  children.add(child);
  let started = false;
  child.stdout?.on('data', (b: Buffer) => {
    if (b.toString().includes('started')) started = true;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, started: () => started, go: () => void child.stdin?.write('go\n'), exited };
}

async function checkpointGp(db: Kysely<unknown>, id: string): Promise<bigint> {
  const { rows } = await sql<{
    gp: string;
  }>`SELECT global_position AS gp FROM es_processors WHERE processor_id = ${id}`.execute(db);
  return BigInt(rows[0]?.gp ?? '0');
}

async function caughtUp(db: Kysely<unknown>, id: string): Promise<boolean> {
  const { rows } = await sql<{ behind: boolean }>`
    SELECT EXISTS (SELECT 1 FROM es_messages m, es_processors p
                    WHERE p.processor_id = ${id}
                      AND (m.transaction_id, m.global_position) > (p.transaction_id, p.global_position)) AS behind`.execute(
    db,
  );
  return rows[0]?.behind === false;
}

describe('CP-7 with real process kills', () => {
  it('SIGKILL of a processor process at random points neither loses nor double-applies; the checkpoint never regresses', async () => {
    const soak = process.env.PADDOCK_SOAK === '1';
    const kills = soak ? 40 : 4;
    const { url, db } = await pg.fresh();
    const store = new EventStore(db);
    await createEffectsTable(db);
    await auditCheckpoints(db);
    const random = rng(42);
    const batch = (n: number, base: number): NewEvent[] =>
      Array.from({ length: n }, (_, i) => ({ type: 'Ticked', data: { v: base + i } }));
    for (let i = 0; i < 50; i++)
      {await store.append(`k-${i % 10}`, 'k', batch(20, i), { expectedVersion: 'any' });}

    let killedMidway = 0;
    let next = spawnChild(url, 'killable');
    for (let k = 0; k < kills; k++) {
      const before = await checkpointGp(db, 'killable');
      const run = next;
      next = spawnChild(url, 'killable'); // loads while this one runs; starts only on "go"
      run.go();
      await waitFor(run.started, { timeoutMs: 60_000, what: `child ${k} started` });
      await waitFor(async () => (await checkpointGp(db, 'killable')) > before, {
        timeoutMs: 30_000,
        what: `child ${k} progressed`,
      });
      // Fault injection: kill after a random extra moment, while it is mid-stream.
      await new Promise((r) => setTimeout(r, random() * 60));
      const open = await sql<{ n: string }>`
        SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`.execute(
        db,
      );
      run.child.kill('SIGKILL');
      if (Number(open.rows[0]?.n ?? 0) > 0) killedMidway++;
      await run.exited;
      // More writes while processors come and go.
      await store.append(`k-${k % 10}`, 'k', batch(5, 1000 + k), { expectedVersion: 'any' });
    }

    const last = next;
    last.go();
    await waitFor(last.started, { timeoutMs: 60_000, what: 'final child started' });
    await waitFor(() => caughtUp(db, 'killable'), {
      timeoutMs: 60_000,
      what: 'final child caught up',
    });
    last.child.kill('SIGTERM');
    await last.exited;

    const { effects, fold } = await effectsVersusFold(db);
    const audit = await checkpointRegressions(db);
    console.log(
      `CP-7 kill -9: ${kills} kills (${killedMidway} with a transaction open at kill time), ${audit.moves} checkpoint moves, ${audit.regressions} regressions`,
    );
    expect(effects).toEqual(fold);
    expect(effects).toHaveLength(10);
    expect(audit.regressions).toBe(0);
    expect(audit.moves).toBeGreaterThan(kills);
  }, 240_000);
});

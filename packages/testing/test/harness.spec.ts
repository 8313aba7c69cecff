import { Client } from 'pg';
import { connect } from 'node:net';
import { startNats, startPostgres, waitFor, FixedClock, sequentialIds } from '../src';

describe('throwaway services', () => {
  it('starts a private Postgres cluster and clones databases from a template', async () => {
    const pg = await startPostgres();
    try {
      const tplUrl = await pg.createDatabase('tpl');
      const c = new Client({ connectionString: tplUrl });
      await c.connect();
      await c.query('create table t(x int)');
      await c.query('insert into t values (42)');
      await c.end();
      const copyUrl = await pg.createDatabase('copy1', 'tpl');
      const c2 = new Client({ connectionString: copyUrl });
      await c2.connect();
      const r = await c2.query<{ x: number }>('select x from t');
      await c2.end();
      expect(r.rows).toEqual([{ x: 42 }]);
      expect(pg.port).not.toBe(5432);
    } finally {
      pg.stop();
    }
  });

  it('starts, kills and restarts a private nats-server on the same port', async () => {
    const nats = await startNats();
    const reachable = (): Promise<boolean> =>
      new Promise((resolve) => {
        const s = connect(nats.port, '127.0.0.1');
        s.once('connect', () => { s.destroy(); resolve(true); });
        s.once('error', () => resolve(false));
      });
    try {
      expect(await reachable()).toBe(true);
      await nats.kill();
      expect(await reachable()).toBe(false);
      await nats.restart();
      expect(await reachable()).toBe(true);
    } finally {
      await nats.stop();
    }
  });

  it('fixed clock and ids are deterministic, waitFor reports what it waited for', async () => {
    const clock = new FixedClock('2026-01-01T00:00:00Z');
    clock.advance(1000);
    expect(clock.now().toISOString()).toBe('2026-01-01T00:00:01.000Z');
    const ids = sequentialIds('sb');
    expect([ids(), ids()]).toEqual(['sb-1', 'sb-2']);
    await expect(waitFor(() => false, { timeoutMs: 50, what: 'never' })).rejects.toThrow(/never/);
  });
});

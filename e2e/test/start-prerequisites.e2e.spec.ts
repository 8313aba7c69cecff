import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  REPO_ROOT,
  freePort,
  processesUsing,
  startPostgres,
  type ThrowawayPostgres,
} from '@paddock/testing';
import { tcpReachable } from '../../scripts/prerequisites';
import { pathWithout } from '../src/path-without';

const escape = (literal: string): string => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * `pnpm start`'s entry on a machine missing one prerequisite at a time: one line naming it and its
 * fix, a non-zero exit, and nothing started (no process, no service log).
 */
describe('pnpm start without a prerequisite', () => {
  let pg: ThrowawayPostgres;
  let scratch: string;

  beforeAll(async () => {
    pg = await startPostgres();
    scratch = mkdtempSync(join(tmpdir(), 'paddock-prereq-'));
  });

  afterAll(() => {
    pg?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  /** Runs the entry of `pnpm start` with everything present but what `overrides` takes away. */
  async function start(overrides: NodeJS.ProcessEnv): Promise<{
    status: number | null;
    stdout: string;
    stderr: string;
    stateDir: string;
    natsPort: number;
  }> {
    const stateDir = mkdtempSync(join(scratch, 'state-'));
    const natsPort = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: pg.urlFor('paddock_prereq'),
      PADDOCK_NATS_PORT: String(natsPort),
      CONTROL_PLANE_PORT: String(await freePort()),
      GATEWAY_PORT: String(await freePort()),
      PADDOCK_STATE_DIR: stateDir,
      ...overrides,
    };
    if (!('NATS_URL' in overrides)) delete env.NATS_URL;
    const r = spawnSync(process.execPath, [join(REPO_ROOT, 'scripts/start.mjs')], {
      cwd: REPO_ROOT,
      env,
      encoding: 'utf8',
      timeout: 120_000,
    });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr, stateDir, natsPort };
  }

  async function expectRefused(r: Awaited<ReturnType<typeof start>>, line: RegExp): Promise<void> {
    expect(r.status, r.stderr).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(line) as string]);
    // Nothing was started: no process carries its state directory, no service wrote a log, and
    // its nats-server's port is closed.
    expect(processesUsing(r.stateDir)).toEqual([]);
    expect(readdirSync(r.stateDir).filter((f) => f.endsWith('.log'))).toEqual([]);
    expect(await tcpReachable('127.0.0.1', r.natsPort, 500)).toBe(false);
  }

  it('bubblewrap not on PATH', async () => {
    const r = await start({ PATH: pathWithout('bwrap', scratch) });
    await expectRefused(
      r,
      /^error: bubblewrap: bwrap is not on PATH \(.+\)\. Fix: apt-get install bubblewrap$/,
    );
  });

  it('Postgres down: DATABASE_URL at a closed port', async () => {
    const port = await freePort();
    const url = `postgres://postgres@127.0.0.1:${port}/paddock`;
    const r = await start({ DATABASE_URL: url });
    const fix = String.raw`(pg_ctlcluster \S+ main start|apt-get install postgresql .+) \(or set DATABASE_URL to a running server\)`;
    await expectRefused(
      r,
      new RegExp(
        `^error: Postgres: Postgres is not reachable at ${escape(`127.0.0.1:${port} (DATABASE_URL=${url}). Fix: `)}${fix}$`,
      ),
    );
  });

  it('NATS down: NATS_URL at a closed port', async () => {
    const port = await freePort();
    const r = await start({ NATS_URL: `nats://127.0.0.1:${port}` });
    const url = `nats://127.0.0.1:${port}`;
    await expectRefused(
      r,
      new RegExp(
        `^${escape(`error: NATS: NATS is not reachable at 127.0.0.1:${port} (NATS_URL=${url}). Fix: nats-server -a 127.0.0.1 -p ${port} -js &`)}`,
      ),
    );
  });

  it('NATS unavailable: no nats-server on PATH for pnpm start to run', async () => {
    const r = await start({ PATH: pathWithout('nats-server', scratch) });
    await expectRefused(
      r,
      /^error: nats-server: nats-server is not on PATH \(.+\)\. Fix: apt-get install nats-server$/,
    );
  });

  it('the private NATS port already taken', async () => {
    const port = await freePort();
    const squatter: Server = createServer();
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
    try {
      const r = await start({ PADDOCK_NATS_PORT: String(port) });
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr.trimEnd().split('\n')).toEqual([
        expect.stringMatching(
          new RegExp(
            `^error: NATS port: port ${port} \\(PADDOCK_NATS_PORT\\) is taken; .+ Fix: PADDOCK_NATS_PORT=\\d+ pnpm start$`,
          ),
        ) as string,
      ]);
      expect(processesUsing(r.stateDir)).toEqual([]);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });
});

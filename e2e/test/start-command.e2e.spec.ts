import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, freePort, httpJson, removeStateDir, startNats, startPostgres, waitFor, type ThrowawayNats, type ThrowawayPostgres } from '@paddock/testing';
import { Client } from 'pg';
import { buildAll } from '../src/platform';

/**
 * The README's first command, as a newcomer runs it: `pnpm start` reaches "ready", the commands
 * it prints work as printed, Ctrl-C stops everything, and a second run reuses the data.
 */
describe('pnpm start', () => {
  let pg: ThrowawayPostgres;
  let nats: ThrowawayNats;
  let stateDir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    buildAll();
    pg = await startPostgres();
    nats = await startNats();
    stateDir = mkdtempSync(join(tmpdir(), 'paddock-start-'));
    // As `.paddock` in a checkout: traversable by the unprivileged sandbox user (mkdtemp gives 0700).
    chmodSync(stateDir, 0o755);
    env = {
      ...process.env,
      // The database does not exist yet: `pnpm start` creates it.
      DATABASE_URL: pg.urlFor('paddock_start'),
      NATS_URL: nats.url,
      CONTROL_PLANE_PORT: String(await freePort()),
      GATEWAY_PORT: String(await freePort()),
      PADDOCK_STATE_DIR: stateDir,
      XDG_CONFIG_HOME: join(stateDir, 'xdg'),
    };
  }, 300_000);

  afterAll(async () => {
    // Sandboxes outlive `pnpm start` by design: stop them (and their supervisors' mounts) first.
    if (stateDir) await removeStateDir(stateDir);
    await nats?.stop();
    pg?.stop();
  });

  async function start(): Promise<{ child: ChildProcess; output: () => string }> {
    // Its own process group, so stop() can signal the group the way Ctrl-C in a terminal does.
    const child = spawn('pnpm', ['start'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    await waitFor(
      () => {
        if (child.exitCode !== null) throw new Error(`pnpm start exited ${child.exitCode}:\n${out}`);
        return out.includes('Paddock is ready.');
      },
      { timeoutMs: 240_000, intervalMs: 200, what: 'pnpm start ready' },
    );
    return { child, output: () => out };
  }

  async function stop(child: ChildProcess): Promise<void> {
    if (child.pid) process.kill(-child.pid, 'SIGINT');
    await waitFor(() => child.exitCode !== null || child.signalCode !== null, { timeoutMs: 30_000, what: 'pnpm start exit' });
  }

  it('reaches ready; the printed next commands work as printed; a second run reuses the data', async () => {
    const first = await start();
    const out = first.output();
    const token = /admin token\s+(\S+)/.exec(out)?.[1];
    expect(token).toMatch(/^pdk_/);
    const next = out
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.startsWith('pnpm cwic'));
    expect(next).toHaveLength(3);
    for (const cmd of next) {
      const r = spawnSync('/bin/sh', ['-c', cmd], { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 120_000 });
      expect(r.status, `${cmd}\n${r.stdout}\n${r.stderr}`).toBe(0);
      if (cmd.includes('runner get')) expect(r.stdout).toMatch(/local\s+local\s+local\s+READY\s+CONNECTED/);
      if (cmd.includes('exec')) expect(r.stdout).toContain('hello');
    }
    // The gateway and the controller are connected with their own roles, never the administrator's.
    const admin = new Client({ connectionString: pg.urlFor('paddock_start') });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ app: string; role: string }>(
        "SELECT DISTINCT application_name AS app, usename AS role FROM pg_stat_activity WHERE datname = 'paddock_start' AND application_name IN ('paddock-gateway', 'paddock-controller') ORDER BY 1",
      );
      expect(rows).toEqual([
        { app: 'paddock-controller', role: expect.stringMatching(/^paddock_start_ctl_[0-9a-f]{12}$/) as string },
        { app: 'paddock-gateway', role: 'paddock_start_gateway' },
      ]);
    } finally {
      await admin.end();
    }
    const cpUrl = `http://127.0.0.1:${env.CONTROL_PLANE_PORT}`;
    const uid = (await httpJson<{ uid: string }>(cpUrl, 'GET', '/v1/sandbox/managedRunners/local', token as string)).json.uid;
    await stop(first.child);
    // Ctrl-C stopped every process it started.
    expect((await fetch(`${cpUrl}/healthz`).catch(() => undefined))?.ok).not.toBe(true);

    const second = await start();
    expect(second.output()).toContain(token as string);
    const again = await httpJson<{ uid: string; installStatus: string }>(cpUrl, 'GET', '/v1/sandbox/managedRunners/local', token as string);
    expect(again.json.uid).toBe(uid);
    await stop(second.child);
  });
});

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { REPO_ROOT, freePort, httpJson, removeStateDir, startPostgres, waitFor, type ThrowawayPostgres } from '@paddock/testing';
import { buildAll } from '../src/platform';

/**
 * The README's first command, as a newcomer runs it: `pnpm start` reaches "ready", the commands
 * it prints work as printed, Ctrl-C stops everything, and a second run reuses the data. It runs
 * its own nats-server with authentication (no NATS_URL given): anonymous clients are refused.
 */
describe('pnpm start', () => {
  let pg: ThrowawayPostgres;
  let natsPort: number;
  let stateDir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    buildAll();
    pg = await startPostgres();
    natsPort = await freePort();
    stateDir = mkdtempSync(join(tmpdir(), 'paddock-start-'));
    // As `.paddock` in a checkout: traversable by the unprivileged sandbox user (mkdtemp gives 0700).
    chmodSync(stateDir, 0o755);
    env = {
      ...process.env,
      // The database does not exist yet: `pnpm start` creates it.
      DATABASE_URL: pg.urlFor('paddock_start'),
      PADDOCK_NATS_PORT: String(natsPort),
      CONTROL_PLANE_PORT: String(await freePort()),
      GATEWAY_PORT: String(await freePort()),
      PADDOCK_STATE_DIR: stateDir,
      XDG_CONFIG_HOME: join(stateDir, 'xdg'),
    };
    // No NATS_URL: `pnpm start` runs its own server, with authentication.
    delete env.NATS_URL;
  }, 300_000);

  afterAll(async () => {
    // Sandboxes outlive `pnpm start` by design: stop them (and their supervisors' mounts) first.
    if (stateDir) await removeStateDir(stateDir);
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
    // Its NATS refuses anonymous clients; every key and credential it wrote is private.
    await expect(connect({ servers: `nats://127.0.0.1:${natsPort}`, reconnect: false })).rejects.toThrow(/Authorization Violation/);
    const natsDir = join(stateDir, 'nats');
    const files = ['operator.nk', 'account.nk', 'server.conf', ...readdirSync(join(natsDir, 'signing')).map((f) => `signing/${f}`), ...readdirSync(join(natsDir, 'creds')).map((f) => `creds/${f}`)];
    expect(files).toEqual(expect.arrayContaining(['creds/gateway-gateway.creds', 'creds/control-plane-control-plane.creds', 'creds/controller-local.creds']));
    for (const f of files) expect([f, (statSync(join(natsDir, f)).mode & 0o777).toString(8)]).toEqual([f, '600']);
    const cpUrl = `http://127.0.0.1:${env.CONTROL_PLANE_PORT}`;
    const uid = (await httpJson<{ uid: string }>(cpUrl, 'GET', '/v1/sandbox/managedRunners/local', token as string)).json.uid;
    await stop(first.child);
    // Ctrl-C stopped every process it started.
    expect((await fetch(`${cpUrl}/healthz`).catch(() => undefined))?.ok).not.toBe(true);
    await expect(connect({ servers: `nats://127.0.0.1:${natsPort}`, reconnect: false, timeout: 2_000 })).rejects.toThrow();

    const second = await start();
    expect(second.output()).toContain(token as string);
    const again = await httpJson<{ uid: string; installStatus: string }>(cpUrl, 'GET', '/v1/sandbox/managedRunners/local', token as string);
    expect(again.json.uid).toBe(uid);
    await stop(second.child);
  });
});

import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { REPO_ROOT, httpJson } from '@paddock/testing';
import { Client } from 'pg';
import { prepareStart, startPaddock, type StartSetup } from '../src/pnpm-start';

/**
 * The README's first command, as a newcomer runs it: `pnpm start` reaches "ready", the commands
 * it prints work as printed, Ctrl-C stops everything, and a second run reuses the data. It runs
 * its own nats-server with authentication (no NATS_URL given): anonymous clients are refused.
 */
describe('pnpm start', () => {
  let setup: StartSetup;

  beforeAll(async () => {
    setup = await prepareStart('paddock_start');
  }, 300_000);

  afterAll(async () => {
    // Whatever a failed test left behind (Ctrl-C stops everything otherwise).
    await setup?.cleanup();
  });

  /** The `pnpm cwic` lines of the README's quick start, as printed there. */
  function readmeNextCommands(): string[] {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const quickStart = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('\n## ', readme.indexOf('## Quick start') + 3));
    return quickStart
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.startsWith('pnpm cwic'));
  }

  it('reaches ready; the printed next commands work as printed; a second run reuses the data', async () => {
    const { env, pg, natsPort, stateDir } = setup;
    const first = await startPaddock(setup);
    const out = first.output();
    const token = /admin token\s+(\S+)/.exec(out)?.[1];
    expect(token).toMatch(/^pdk_/);
    // The product SDKs' CWSANDBOX_BASE_URL.
    expect(out).toContain(`gRPC/Connect   http://127.0.0.1:${env.GATEWAY_GRPC_PORT}`);
    const next = out
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.startsWith('pnpm cwic'));
    // The README's quick start shows the same commands (the token aside), so they cannot drift.
    expect(next.map((c) => c.replace(/pdk_\S+/, 'pdk_...').replace(/:\d+/g, ':PORT'))).toEqual(readmeNextCommands().map((c) => c.replace(/:\d+/g, ':PORT')));
    const sh = (cmd: string): SpawnSyncReturns<string> => spawnSync('/bin/sh', ['-c', cmd], { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 120_000 });
    for (const cmd of next) {
      // The sandbox command, ten times in a row: on a 2-CPU machine it must never run out of capacity.
      for (let i = 0; i < (cmd.includes('sandbox run --') ? 10 : 1); i++) {
        const r = sh(cmd);
        expect(r.status, `${cmd} (run ${i + 1})\n${r.stdout}\n${r.stderr}`).toBe(0);
        if (cmd.includes('runner get')) expect(r.stdout).toMatch(/local\s+local\s+local\s+READY\s+CONNECTED/);
        if (cmd.includes('sandbox run --')) expect(r.stdout).toBe('hello\n');
      }
    }
    // Its NATS refuses anonymous clients; every key and credential it wrote is private.
    await expect(connect({ servers: `nats://127.0.0.1:${natsPort}`, reconnect: false })).rejects.toThrow(/Authorization Violation/);
    const natsDir = join(stateDir, 'nats');
    const files = ['operator.nk', 'account.nk', 'server.conf', ...readdirSync(join(natsDir, 'signing')).map((f) => `signing/${f}`), ...readdirSync(join(natsDir, 'creds')).map((f) => `creds/${f}`)];
    expect(files).toEqual(expect.arrayContaining(['creds/gateway-gateway.creds', 'creds/control-plane-control-plane.creds', 'creds/controller-local.creds']));
    for (const f of files) expect([f, (statSync(join(natsDir, f)).mode & 0o777).toString(8)]).toEqual([f, '600']);
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
    // The printed console URL serves the built console, which is told where the gateway is, and
    // the gateway lets that origin call it.
    const consoleUrl = /console\s+(\S+)/.exec(out)?.[1];
    expect(consoleUrl).toBe(`${cpUrl}/console/`);
    const page = await fetch(consoleUrl as string);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>Paddock console</title>');
    const { gatewayUrl } = (await (await fetch(`${cpUrl}/console/config.json`)).json()) as { gatewayUrl: string };
    expect(gatewayUrl).toBe(`http://127.0.0.1:${env.GATEWAY_PORT}`);
    const preflight = await fetch(`${gatewayUrl}/v1/sandboxes`, { method: 'OPTIONS', headers: { origin: cpUrl, 'access-control-request-method': 'GET' } });
    expect(preflight.headers.get('access-control-allow-origin')).toBe(cpUrl);
    const uid = (await httpJson<{ uid: string }>(cpUrl, 'GET', '/v1/sandbox/managedRunners/local', token as string)).json.uid;
    // A sandbox left running, for Ctrl-C to stop.
    const created = sh('pnpm cwic sandbox create -o name -- sleep 600');
    expect(created.status, created.stderr).toBe(0);
    const sandboxIds = [created.stdout.trim().replace('sandbox/', '')];
    const gwUrl = `http://127.0.0.1:${env.GATEWAY_PORT}`;
    // Ctrl-C stops every process it started, the runner and its sandbox included, within 10 s.
    const stoppedInMs = await first.stop();
    expect(stoppedInMs).toBeLessThan(10_000);
    expect(first.output()).toContain('stopping the runner and its sandboxes...');
    expect((await fetch(`${cpUrl}/healthz`).catch(() => undefined))?.ok).not.toBe(true);
    await expect(connect({ servers: `nats://127.0.0.1:${natsPort}`, reconnect: false, timeout: 2_000 })).rejects.toThrow();

    const second = await startPaddock(setup);
    expect(second.output()).toContain(token as string);
    const again = await httpJson<{ uid: string; installStatus: string }>(cpUrl, 'GET', '/v1/sandbox/managedRunners/local', token as string);
    expect(again.json.uid).toBe(uid);
    // The sandbox stopped with the platform is recorded as such, not lost.
    for (const id of sandboxIds) {
      const ended = await httpJson<{ status: { state: string; stateReason?: string } }>(gwUrl, 'GET', `/v1/sandboxes/${id}`, token as string);
      expect(ended.json.status).toMatchObject({ state: 'STATE_FAILED', stateReason: 'RUNNER_STOPPED' });
    }
    await second.stop();
  });
});

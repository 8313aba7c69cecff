import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, provisionGatewayRole, removeStateDir, startAppProcess, waitFor, type AppProcess } from '@paddock/testing';
import { sh, startPlatform, type Platform } from './support/platform';
import { TmuxSession } from './support/tmux';

/**
 * `cwic sandbox` data-plane commands against the compiled gateway and a real runner process
 * (local backend: bubblewrap), through pipes, and `sh` through a real terminal.
 */
const GATEWAY_ENTRY = join(REPO_ROOT, 'apps', 'gateway', 'dist', 'main.js');
const RUNNER_ENTRY = join(REPO_ROOT, 'apps', 'runner', 'dist', 'main.js');

describe('cwic sandbox data-plane commands (gateway + runner)', () => {
  let p: Platform;
  let gw: AppProcess;
  let runnerProc: ChildProcess;
  let runnerState = '';
  let runnerLog = '';
  let id = '';
  const sessions: TmuxSession[] = [];

  beforeAll(async () => {
    p = await startPlatform();
    const organizationId = (await p.api<{ organization: { id: string } }>('GET', '/v1/auth/whoami')).json.organization.id;
    const cluster = await p.api<{ id: string }>('POST', '/v1/clusters', { name: 'dp', zone: 'us-east-1' });
    expect(cluster.status).toBeLessThan(300);
    const created = await p.api('POST', '/v1/sandbox/managedRunners?requestId=dp-1', { identity: { runnerId: 'dp-1', zone: 'us-east-1', clusterId: cluster.json.id }, requestId: 'dp-1' });
    expect(created.status).toBeLessThan(300);
    gw = await startAppProcess({ entry: GATEWAY_ENTRY, portVar: 'GATEWAY_PORT', env: { DATABASE_URL: await provisionGatewayRole(p.databaseUrl), ...(await p.nats.env('gateway')), GATEWAY_AUTH_CACHE_MS: '0', GATEWAY_GRPC_PORT: '0', GATEWAY_LOG_LEVEL: 'error' } });
    const state = mkdtempSync(join(tmpdir(), 'cwic-runner-'));
    runnerState = state;
    chmodSync(state, 0o755);
    const config = join(state, 'runner.yaml');
    writeFileSync(config, 'revision: 1\n');
    runnerProc = spawn(process.execPath, [RUNNER_ENTRY], {
      env: {
        ...process.env,
        PADDOCK_RUNNER_ID: 'dp-1',
        PADDOCK_ORGANIZATION_ID: organizationId,
        PADDOCK_CLUSTER_ID: cluster.json.id,
        PADDOCK_ZONE: 'us-east-1',
        ...(await p.nats.env('runner', 'dp-1')),
        PADDOCK_RUNNER_CONFIG: config,
        PADDOCK_RUNNER_STATE_DIR: state,
        PADDOCK_SNAPSHOT_STORE_DIR: join(state, 'snapshots'),
        PADDOCK_HEARTBEAT_INTERVAL_MS: '1000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    runnerProc.stdout?.on('data', (d: Buffer) => (runnerLog += d.toString()));
    runnerProc.stderr?.on('data', (d: Buffer) => (runnerLog += d.toString()));
    p.shellEnv.PADDOCK_API_KEY = p.token;
    p.shellEnv.PADDOCK_CONTROL_PLANE_URL = p.cpUrl;
    p.shellEnv.PADDOCK_GATEWAY_URL = gw.url;
    await waitFor(async () => (await p.api<{ connectionStatus: string }>('GET', '/v1/sandbox/managedRunners/dp-1')).json.connectionStatus === 'RUNNER_CONNECTION_STATUS_CONNECTED', {
      timeoutMs: 60_000,
      what: `runner dp-1 CONNECTED (runner output: ${runnerLog.slice(-500)})`,
    });
  }, 240_000);

  afterAll(async () => {
    for (const s of sessions) s.kill();
    // Sandboxes outlive their runner by design: stop them through the API first, then the runner.
    if (gw) sh(p, 'cwic sandbox stop --all');
    runnerProc?.kill('SIGTERM');
    if (runnerState) await removeStateDir(runnerState);
    await gw?.stop();
    await p?.stop();
  });

  it('create --wait prints the id; ls and get show it RUNNING', () => {
    const c = sh(p, 'cwic sandbox create --image paddock/base --wait -o name -- sleep 600');
    expect(c.stderr).toBe('');
    expect(c.code).toBe(0);
    expect(c.stdout).toMatch(/^sandbox\/\S+\n$/);
    id = c.stdout.trim().replace('sandbox/', '');
    expect(sh(p, 'cwic sandbox ls -o name').stdout).toContain(`sandbox/${id}`);
    const g = sh(p, `cwic sandbox get ${id} -o json | jq -r '.[0].status.state'`);
    expect(g.stdout.trim()).toBe('STATE_RUNNING');
  });

  it('--runner-id places on that runner (the organization\'s own runners: no mode needed)', () => {
    const c = sh(p, 'cwic sandbox create --runner-id dp-1 --wait -o json -- sleep 60');
    expect(c.stderr).toBe('');
    expect(c.code).toBe(0);
    const sb = JSON.parse(c.stdout) as { sandboxId: string; runnerId?: string; status: { runnerId?: string } }[] | { sandboxId: string; status: { runnerId?: string } };
    const one = Array.isArray(sb) ? sb[0] : sb;
    expect(one?.status.runnerId).toBe('dp-1');
    expect(sh(p, `cwic sandbox stop ${one?.sandboxId ?? ''}`).code).toBe(0);
    expect(sh(p, 'cwic sandbox create --runner-id nowhere -- true').stderr).toMatch(/nowhere/);
  });

  it("exec streams output and returns the command's exit code", () => {
    const r = sh(p, `cwic sandbox exec ${id} -- sh -c 'echo out; echo err >&2; exit 7'`);
    expect(r.code).toBe(7);
    expect(r.stdout).toBe('out\n');
    expect(r.stderr).toBe('err\n');
  });

  it('cp to and from the sandbox through pipes', () => {
    const up = sh(p, `printf 'hello paddock' | cwic sandbox cp - ${id}:/tmp/greeting`);
    expect(up.code).toBe(0);
    const down = sh(p, `cwic sandbox cp ${id}:/tmp/greeting -`);
    expect(down.code).toBe(0);
    expect(down.stdout).toBe('hello paddock');
    expect(sh(p, `cwic sandbox cp ${id}:/tmp/nope -`).code).toBe(3);
  });

  it('run streams the command output, exits with its code and stops its sandbox, ten times in a row', () => {
    for (let i = 0; i < 10; i++) {
      const r = sh(p, `cwic sandbox run --cpu 250m --tag run-test -- sh -c 'echo out-${i}; echo err >&2; exit 3'`);
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 3, stdout: `out-${i}\n`, stderr: 'err\n' });
    }
    expect(sh(p, 'cwic sandbox run -- true').code).toBe(0);
    // Nothing is left holding the runner's capacity.
    expect(sh(p, 'cwic sandbox ls --tag run-test -o name').stdout).toBe('');
    const none = sh(p, 'cwic sandbox run');
    expect(none.code).toBe(2);
  });

  it('stop --tag stops every live sandbox carrying the tags; stop without ids, --tag or --all is a usage error', () => {
    for (let i = 0; i < 2; i++) expect(sh(p, 'cwic sandbox create --cpu 100m --tag batch --tag nightly -o name -- sleep 600').code).toBe(0);
    const r = sh(p, 'cwic sandbox stop --tag batch nightly');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('2 sandboxes stopped\n');
    expect(sh(p, 'cwic sandbox stop').code).toBe(2);
    expect(sh(p, 'cwic sandbox stop --all --tag x').code).toBe(2);
  });

  it('create --port serves the port through the gateway and prints its URL', async () => {
    const c = sh(p, 'cwic sandbox create --image paddock/base --port 8000 --wait -o name -- sh -c "cd /workspace && echo served > index.txt && exec python3 -m http.server 8000"');
    expect([c.code, c.stderr]).toEqual([0, '']);
    const [name, portLine] = c.stdout.trim().split('\n') as [string, string];
    const sandboxId = name.replace('sandbox/', '');
    expect(portLine).toBe(`port 8000: ${gw.url}/s/${sandboxId}/8000/`);
    const url = portLine.replace('port 8000: ', '');
    const body = await waitFor(
      async () => {
        const r = await fetch(`${url}index.txt`).catch(() => undefined);
        return r?.status === 200 ? r.text() : undefined;
      },
      { timeoutMs: 20_000, what: 'the service URL to answer' },
    );
    expect(body).toBe('served\n');
    expect(sh(p, `cwic sandbox stop ${sandboxId}`).code).toBe(0);
  });

  it('logs show the main process output', () => {
    const c = sh(p, "cwic sandbox create --image paddock/base --wait -o name -- sh -c 'echo from-main; sleep 600'");
    expect(c.code).toBe(0);
    const other = c.stdout.trim();
    return waitFor(() => sh(p, `cwic sandbox logs ${other}`).stdout.includes('from-main'), { timeoutMs: 15_000, what: 'logs' });
  });

  it('explain names the runner that would take a spec, and why one would not', () => {
    writeFileSync(join(p.workDir, 'spec.yaml'), 'containers:\n  - name: main\n    image: paddock/base\n    command: sleep\n    args: ["1"]\n');
    const r = sh(p, 'cwic sandbox explain -f spec.yaml');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('would place on: dp-1');
    // The local runner pulls any image, but runs no pod for annotations to reach: refused by name.
    writeFileSync(join(p.workDir, 'annotated.yaml'), 'containers:\n  - name: main\n    image: paddock/base\nannotations:\n  team.example/owner: cli\n');
    const refused = sh(p, 'cwic sandbox explain -f annotated.yaml');
    expect(refused.stdout).toContain('no runner admits this spec');
    expect(refused.stdout).toMatch(/dp-1: refuses[\s\S]*annotations/);
    // The same spec, created: refused with the seeds' error shape, exit 4 (failed precondition).
    const create = sh(p, 'cwic sandbox create -f annotated.yaml');
    expect(create.code).toBe(4);
    expect(create.stderr).toMatch(/^Error: creating sandbox: failed_precondition: /);
  });

  it('sh opens an interactive shell in a real terminal', async () => {
    const s = TmuxSession.start(`cwic sandbox sh ${id}`, { ...p.shellEnv, TERM: 'xterm-256color' }, p.workDir);
    sessions.push(s);
    await waitFor(() => s.screen().trim().length > 0, { timeoutMs: 20_000, what: 'a prompt' });
    s.type('echo $((6*7))');
    await s.waitForText('42');
    s.type('exit 5');
    expect(await s.exitCode()).toBe(5);
  }, 60_000);

  it('pause, resume and snapshot a sandbox', () => {
    const paused = sh(p, `cwic sandbox pause ${id}`);
    expect(paused.stderr).toBe('');
    expect(paused.stdout).toBe(`sandbox/${id} PAUSED\n`);
    expect(sh(p, `cwic sandbox get ${id} -o json | jq -r '.[0].status.state'`).stdout.trim()).toBe('STATE_PAUSED');
    // An exec resumes it.
    expect(sh(p, `cwic sandbox exec ${id} -- echo awake`).stdout).toBe('awake\n');
    expect(sh(p, `cwic sandbox resume ${id}`).stdout).toBe(`sandbox/${id} RUNNING\n`);
    const snap = sh(p, `cwic sandbox snapshot ${id} -o json`);
    expect(snap.stderr).toBe('');
    expect(JSON.parse(snap.stdout)).toMatchObject({ state: 'SNAPSHOT_STATE_READY', sourceSandboxId: id, sourceVolumeName: 'workspace' });
    const missing = sh(p, 'cwic sandbox pause does-not-exist');
    expect(missing.code).toBe(3);
  });

  it('stop ends the sandbox; a missing one exits 3', () => {
    const r = sh(p, `cwic sandbox stop ${id}`);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`sandbox/${id} stopped`);
    const missing = sh(p, 'cwic sandbox get does-not-exist');
    expect(missing.code).toBe(3);
    expect(missing.stderr).toMatch(/^Error: getting sandbox does-not-exist: not_found: /);
  });

  it('stop --all stops every live sandbox of the organization', () => {
    expect(sh(p, 'cwic sandbox create --cpu 100m -o name -- sleep 600').code).toBe(0);
    const r = sh(p, 'cwic sandbox stop --all');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^[1-9]\d* sandbox(es)? stopped\n$/);
    expect(sh(p, 'cwic sandbox ls -o name').stdout).toBe('');
  });
});

import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { RunnerHeartbeatSchema, subjects, type RunnerHeartbeat } from '@paddock/contracts';
import { credsInfo } from '@paddock/nats';
import { credsSecrets, removeStateDir, secretScanArgv, startNats, waitFor, type SecretScanReport, type ThrowawayNats } from '@paddock/testing';
import { runnerCgroupsOf } from '../../src/backend/local';
import { BASE_IMAGE, ORG, smallSpec, TEST_STATE_ROOT, uniqueRunnerId } from '../support/harness';
import { RunnerTestClient } from '../support/runner-client';
import { spawnRunnerProcess, type RunnerProcess } from '../support/runner-process';

/**
 * A runner started the careless way (from a shell holding the platform's admin token, bootstrap
 * token and database URL), connected to an authenticating NATS with its own user's credentials
 * file: nothing of that is readable from inside a default sandbox, whether in a process's
 * environment or command line, an open file, the mount table or the filesystem.
 */
describe('runner service: no platform secret inside a sandbox', () => {
  let nats: ThrowawayNats;
  let nc: NatsConnection;
  let runner: RunnerProcess | undefined;
  const runnerId = uniqueRunnerId('sec');
  const stateDir = join(TEST_STATE_ROOT, runnerId);
  const beats: RunnerHeartbeat[] = [];

  beforeAll(async () => {
    nats = await startNats({ jetstream: false });
    nc = await nats.connectHarness();
    nc.subscribe(subjects.runnerHeartbeat(runnerId), { callback: (_e, m) => void beats.push(RunnerHeartbeatSchema.parse(m.json())) });
    await nc.flush();
  });
  afterAll(async () => {
    runner?.child.kill('SIGKILL');
    await nc?.drain();
    await nats?.stop();
    const cg = runnerCgroupsOf({ runnerId, stateDir });
    for (const id of [...cg.listSandboxes(), ...cg.listWarm()]) await cg.killAndRemove(id);
    await removeStateDir(stateDir);
    cg.removeRunnerTree();
  });

  it('finds none of the runner’s credentials or platform variables anywhere a default sandbox can read', async () => {
    const since = Date.now();
    const natsEnv = await nats.env('runner', runnerId);
    const credsFile = natsEnv.NATS_CREDS as string;
    const creds = readFileSync(credsFile, 'utf8');
    const { jwt, seed } = credsSecrets(creds);
    const dbPassword = randomBytes(18).toString('base64url');
    const secrets: Record<string, string> = {
      PADDOCK_API_KEY: `pdk_${randomBytes(32).toString('base64url')}`,
      PADDOCK_BOOTSTRAP_TOKEN: `pdk_${randomBytes(32).toString('base64url')}`,
      DATABASE_URL: `postgres://paddock:${dbPassword}@127.0.0.1:5432/paddock`,
      NATS_URL: natsEnv.NATS_URL as string,
    };
    runner = spawnRunnerProcess({
      ...process.env,
      ...secrets,
      ...natsEnv,
      PADDOCK_RUNNER_ID: runnerId,
      PADDOCK_ORGANIZATION_ID: ORG,
      PADDOCK_RUNNER_STATE_DIR: TEST_STATE_ROOT,
      PADDOCK_HEARTBEAT_INTERVAL_MS: '500',
    });
    const { log } = runner;
    await waitFor(() => beats.length > 0, { timeoutMs: 90_000, what: `a heartbeat of the runner (log: ${log()})` });
    // The runner's user really is the one in the file (an authenticated, scoped connection).
    expect(credsInfo(creds)).toMatchObject({ name: runnerId, role: 'runner' });
    expect((statSync(credsFile).mode & 0o777).toString(8)).toBe('600');

    const client = new RunnerTestClient(nc, runnerId, 150_000);
    const canary = randomBytes(16).toString('hex');
    await client.call('create', {
      sandboxId: 'sec-1',
      organizationId: ORG,
      spec: smallSpec({ containers: [{ name: 'main', image: BASE_IMAGE, resources: { cpu: '500m', memory: '256Mi' }, environmentVariables: { CANARY: canary } }] }),
    });
    await waitFor(async () => (await client.call('get', { sandboxId: 'sec-1', organizationId: ORG })).sandbox.status.state === 'STATE_RUNNING', {
      timeoutMs: 30_000,
      what: 'sec-1 RUNNING',
    });
    // Exercise what a sandbox usually has running: an exec daemon, and a terminal-less command.
    await client.call('exec', { sandboxId: 'sec-1', organizationId: ORG, argv: ['true'] });

    const platformValues: Record<string, string> = {
      ...secrets,
      'DATABASE_URL password': dbPassword,
      'NATS user JWT': jwt,
      'NATS user seed': seed,
    };
    // The positive control: the sandbox's own variable, which its processes do carry.
    const argv = secretScanArgv({ needles: { ...platformValues, CANARY: canary }, since, absent: [credsFile, stateDir] });
    const r = await client.call('exec', { sandboxId: 'sec-1', organizationId: ORG, argv, timeoutSeconds: 120 });
    const stderr = Buffer.from(r.stderrBase64, 'base64').toString();
    expect(r.exitCode, stderr).toBe(0);
    const report = JSON.parse(Buffer.from(r.stdoutBase64, 'base64').toString()) as SecretScanReport;

    // The scanner did read the sandbox's processes (pid 1 among them) and files, and saw the canary.
    expect(report.counts.environ).toBeGreaterThanOrEqual(2);
    expect(report.counts.files).toBeGreaterThan(10);
    // pid 1 (bwrap, the sandbox user's) is readable; its environment is empty, the workload has its own.
    expect(report.unreadable.filter((u) => u.startsWith('/proc/1/'))).toEqual([]);
    expect(report.hits.filter((h) => h.needle === 'CANARY').map((h) => h.where)).toContain('/proc/2/environ');
    expect(report.hits.filter((h) => h.needle !== 'CANARY')).toEqual([]);
    expect(report.present).toEqual([]);

    // Seen from the host (root reads what the sandbox user may not, such as its non-dumpable exec
    // daemon): no process of the sandbox, and no supervisor or zygote of the runner, holds them.
    const cg = runnerCgroupsOf({ runnerId, stateDir });
    const pids = [...cg.pids('sec-1'), ...cg.supervisorPids()];
    expect(pids.length).toBeGreaterThanOrEqual(4);
    for (const pid of pids) {
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8') + readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      for (const [name, value] of Object.entries(platformValues)) expect(environ.includes(value), `${name} in /proc/${pid}`).toBe(false);
    }

    await client.call('delete', { sandboxId: 'sec-1', organizationId: ORG, gracePeriodSeconds: 0 });
    await waitFor(() => cg.listSandboxes().length === 0, { timeoutMs: 20_000, what: 'sec-1 cgroups gone' });
    await runner.stop();
    expect(cg.listWarm()).toEqual([]);
  }, 240_000);
});

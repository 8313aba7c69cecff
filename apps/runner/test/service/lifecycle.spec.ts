import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunnerHeartbeatSchema, subjects, type RunnerHeartbeat } from '@paddock/contracts';
import { waitFor } from '@paddock/testing';
import { ORG, smallSpec, startHarness, BASE_IMAGE, type Harness } from '../support/harness';

/**
 * The runner service end to end over real NATS with real sandboxes (local backend), talking raw
 * NATS as the gateway does.
 */
describe('runner service: lifecycle over NATS', () => {
  let h: Harness;
  let configDir: string;
  let configPath: string;
  const writeConfig = (content: object): void => {
    // Atomic replace, as the controller's local driver (and a ConfigMap symlink swap) does.
    writeFileSync(join(configDir, 'next.json'), JSON.stringify(content));
    renameSync(join(configDir, 'next.json'), configPath);
  };

  beforeAll(async () => {
    configDir = mkdtempSync(join(tmpdir(), 'paddock-runner-config-'));
    configPath = join(configDir, 'runner.json');
    h = await startHarness({ configPath, heartbeatIntervalMs: 300 });
  });
  afterAll(async () => {
    await h?.stop();
    rmSync(configDir, { recursive: true, force: true });
  });

  it('creates a sandbox, replies before it runs, reports RUNNING through events, and runs exec', async () => {
    const created = await h.client.call('create', { sandboxId: 'life-1', organizationId: ORG, spec: smallSpec() });
    expect(['STATE_PENDING', 'STATE_CREATING']).toContain(created.sandbox.status.state);
    await h.waitState('life-1', 'STATE_RUNNING');
    const states = h.events.filter((e) => e.sandboxId === 'life-1').map((e) => e.state);
    expect(states[0]).toBe('STATE_PENDING');
    expect(states).toContain('STATE_RUNNING');

    const r = await h.client.call('exec', { sandboxId: 'life-1', organizationId: ORG, argv: ['echo', 'hi'] });
    expect(r.exitCode).toBe(0);
    expect(Buffer.from(r.stdoutBase64, 'base64').toString()).toBe('hi\n');
    expect(r.stdoutBytesProduced).toBe(3);

    const failing = await h.client.call('exec', { sandboxId: 'life-1', organizationId: ORG, argv: ['/bin/sh', '-c', 'echo err >&2; exit 7'] });
    expect(failing.exitCode).toBe(7);
    expect(Buffer.from(failing.stderrBase64, 'base64').toString()).toBe('err\n');

    const got = await h.client.call('get', { sandboxId: 'life-1', organizationId: ORG });
    expect(got.sandbox.status).toMatchObject({ state: 'STATE_RUNNING', runnerId: h.runnerId });
  });

  it('answers an exec on a sandbox whose supervisor just died with its state, never as a missing file', async () => {
    await h.createRunning('life-gone');
    const supervisor = Number(readFileSync(join(h.stateDir, 'sandboxes', 'life-gone', 'supervisor.pid'), 'utf8'));
    process.kill(supervisor, 'SIGKILL');
    // Whether the runner has noticed yet or not, the answer names the sandbox's state.
    const err = await h.client.callError('exec', { sandboxId: 'life-gone', organizationId: ORG, argv: ['true'] });
    expect(['CWSANDBOX_SANDBOX_NOT_RUNNING', 'CWSANDBOX_SANDBOX_TERMINATED'], err.message).toContain(err.reason);
    expect(err.message).toContain('life-gone');
    await h.waitState('life-gone', 'STATE_FAILED');
  });

  it('deletes the logs of an ended sandbox only (DeleteSandboxLogs), idempotently, and then refuses to serve them', async () => {
    await h.client.call('create', {
      sandboxId: 'life-logs',
      organizationId: ORG,
      spec: smallSpec({ containers: [{ name: 'main', image: BASE_IMAGE, resources: { cpu: '100m', memory: '64Mi' }, command: ['/bin/sh', '-c', 'echo secret-token; sleep 30'] }] }),
    });
    await h.waitState('life-logs', 'STATE_RUNNING');
    const logFile = join(h.stateDir, 'sandboxes', 'life-logs', 'log');
    await waitFor(() => (existsSync(logFile) && readFileSync(logFile).includes('secret-token')) || undefined, { what: 'the output in the log' });

    const live = await h.client.callError('deleteLogs', { sandboxId: 'life-logs', organizationId: ORG });
    expect(live).toMatchObject({ code: 'failed_precondition', reason: 'CWSANDBOX_SANDBOX_NOT_TERMINAL' });
    expect(live.message).toBe('sandbox life-logs is STATE_RUNNING: the logs of a live sandbox cannot be deleted; stop it first');
    expect(readFileSync(logFile).includes('secret-token')).toBe(true);

    await h.client.call('delete', { sandboxId: 'life-logs', organizationId: ORG, gracePeriodSeconds: 0 });
    await h.waitState('life-logs', 'STATE_COMPLETED');
    expect(await h.client.call('deleteLogs', { sandboxId: 'life-logs', organizationId: ORG })).toEqual({});
    expect(existsSync(logFile)).toBe(false);
    expect(await h.client.call('deleteLogs', { sandboxId: 'life-logs', organizationId: ORG })).toEqual({});
    const read = await h.client.callError('logs', { sandboxId: 'life-logs', organizationId: ORG, streamId: 'deleted-logs' });
    expect(read).toMatchObject({ code: 'failed_precondition', reason: 'CWSANDBOX_LOGS_DELETED', message: 'the logs of sandbox life-logs were deleted' });
    // Another organization cannot learn anything about it.
    expect((await h.client.callError('deleteLogs', { sandboxId: 'life-logs', organizationId: 'org-other' })).reason).toBe('CWSANDBOX_SANDBOX_NOT_FOUND');
  });

  it('passes stdin, env and cwd to a unary exec and truncates output past maxOutputBytes, counting every byte', async () => {
    const withStdin = await h.client.call('exec', {
      sandboxId: 'life-1',
      organizationId: ORG,
      argv: ['/bin/sh', '-c', 'cat; printf "%s|%s" "$GREETING" "$(pwd)"'],
      env: { GREETING: 'hello' },
      cwd: '/tmp',
      stdinBase64: Buffer.from([0, 1, 2, 255]).toString('base64'),
    });
    expect(Buffer.from(withStdin.stdoutBase64, 'base64')).toEqual(Buffer.concat([Buffer.from([0, 1, 2, 255]), Buffer.from('hello|/tmp')]));
    const big = await h.client.call('exec', {
      sandboxId: 'life-1',
      organizationId: ORG,
      argv: ['/bin/sh', '-c', 'head -c 100000 /dev/zero'],
      maxOutputBytes: 1000,
    });
    expect(big).toMatchObject({ exitCode: 0, stdoutTruncated: true, stdoutBytesProduced: 100000 });
    expect(Buffer.from(big.stdoutBase64, 'base64').length).toBe(1000);
  });

  it('makes no second sandbox for a redelivered create', async () => {
    const req = { sandboxId: 'life-dup', organizationId: ORG, spec: smallSpec() };
    const [a, b] = await Promise.all([h.client.call('create', req), h.client.call('create', req)]);
    await h.waitState('life-dup', 'STATE_RUNNING');
    const c = await h.client.call('create', req);
    expect(new Set([a.sandbox.status.createTime, b.sandbox.status.createTime, c.sandbox.status.createTime]).size).toBe(1);
    expect(c.sandbox.status.state).toBe('STATE_RUNNING');
    const pendings = h.events.filter((e) => e.sandboxId === 'life-dup' && e.state === 'STATE_PENDING');
    expect(pendings).toHaveLength(1);
    // One process tree: the sandbox's exec sees a single instance of itself.
    const list = await h.client.call('list', { organizationId: ORG });
    expect(list.sandboxes.filter((s) => s.sandboxId === 'life-dup')).toHaveLength(1);
    const other = await h.client.callError('create', { ...req, spec: smallSpec({ tags: ['different'] }) });
    expect(other.code).toBe('already_exists');
  });

  it('stops a sandbox on delete and reports the terminal state with its reason', async () => {
    await h.createRunning('life-del');
    const del = await h.client.call('delete', { sandboxId: 'life-del', organizationId: ORG, gracePeriodSeconds: 0 });
    expect(del.sandbox?.status.state).toBe('STATE_TERMINATING');
    const end = await waitFor(() =>
      h.events.find((e) => e.sandboxId === 'life-del' && (e.state === 'STATE_COMPLETED' || e.state === 'STATE_FAILED')),
    );
    expect(end.reason).toBe('STOPPED_BY_USER');
    const exec = await h.client.callError('exec', { sandboxId: 'life-del', organizationId: ORG, argv: ['true'] });
    expect(exec.reason).toBe('CWSANDBOX_SANDBOX_TERMINATED');
    const missing = await h.client.callError('get', { sandboxId: 'nope', organizationId: ORG });
    expect(missing.reason).toBe('CWSANDBOX_SANDBOX_NOT_FOUND');
  });

  it('rejects a request over the policy maximums before anything starts, naming every violated constraint', async () => {
    writeConfig({ revision: 1, policyEtag: 'etag-strict', policy: { constraints: { resources: { maxCpu: '1', maxMemory: '512Mi' } } } });
    await waitFor(() => h.runner.policy.current().etag === 'etag-strict', { what: 'strict policy applied' });
    const before = h.events.length;
    const err = await h.client.callError('create', {
      sandboxId: 'life-big',
      organizationId: ORG,
      spec: { containers: [{ name: 'main', image: BASE_IMAGE, resources: { cpu: '3', memory: '2Gi' } }] },
    });
    expect(err.code).toBe('invalid_argument');
    expect(err.reason).toBe('CWSANDBOX_POLICY_VIOLATION');
    const fields = err.violations.map((v) => `${v.field}:${v.rule}`);
    expect(fields.some((f) => /cpu/i.test(f))).toBe(true);
    expect(fields.some((f) => /memory/i.test(f))).toBe(true);
    expect(h.events.slice(before).filter((e) => e.sandboxId === 'life-big')).toEqual([]);
    const get = await h.client.callError('get', { sandboxId: 'life-big', organizationId: ORG });
    expect(get.reason).toBe('CWSANDBOX_SANDBOX_NOT_FOUND');
  });

  it('applies a policy change written to the config file to the next sandbox only', async () => {
    const bare = { containers: [{ name: 'main', image: BASE_IMAGE }], maxLifetimeSeconds: 300 };
    writeConfig({ revision: 2, policyEtag: 'etag-a', policy: { constraints: { resources: { defaultCpu: '250m', defaultMemory: '128Mi' } } } });
    await waitFor(() => h.runner.policy.current().etag === 'etag-a');
    await h.createRunning('life-pol-a', bare);
    writeConfig({ revision: 3, policyEtag: 'etag-b', policy: { constraints: { resources: { defaultCpu: '500m', defaultMemory: '256Mi' } } } });
    await waitFor(() => h.runner.policy.current().etag === 'etag-b');
    await h.createRunning('life-pol-b', bare);
    const a = await h.client.call('get', { sandboxId: 'life-pol-a', organizationId: ORG });
    const b = await h.client.call('get', { sandboxId: 'life-pol-b', organizationId: ORG });
    expect(a.sandbox.status.effectiveResources).toMatchObject({ cpu: '250m', memory: '128Mi' });
    expect(b.sandbox.status.effectiveResources).toMatchObject({ cpu: '500m', memory: '256Mi' });
    // The running sandbox's cgroup still has the limit resolved at its launch.
    const mem = await h.client.call('exec', {
      sandboxId: 'life-pol-a',
      organizationId: ORG,
      argv: ['/bin/sh', '-c', 'cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || echo unknown'],
    });
    const limit = Buffer.from(mem.stdoutBase64, 'base64').toString().trim();
    if (limit !== 'unknown') expect(Number(limit)).toBe(128 * 1024 ** 2);
  });

  it('keeps the previous policy when the config file brings an invalid one, and reports DEGRADED naming the field', async () => {
    const before = h.runner.policy.current();
    writeConfig({ revision: 9, policyEtag: 'etag-bad', policy: { constraints: { resources: { maxCPU: '1' } } } });
    const beat = await new Promise<RunnerHeartbeat>((resolve) => {
      const sub = h.nc.subscribe(subjects.runnerHeartbeat(h.runnerId), {
        callback: (_e, m) => {
          const hb = RunnerHeartbeatSchema.parse(m.json());
          if (hb.health !== 'DEGRADED') return;
          sub.unsubscribe();
          resolve(hb);
        },
      });
    });
    expect(beat.healthDetail).toMatch(/maxCPU/);
    expect(beat.policyEtag).toBe(before.etag);
    expect(h.runner.policy.current()).toBe(before);
    // A valid document heals it.
    writeConfig({ revision: 10, policyEtag: 'etag-good', policy: {} });
    await waitFor(() => h.runner.policy.current().etag === 'etag-good');
  });

  it('publishes heartbeats at the interval with capacity, capabilities, the policy etag and usingDefaultPolicy', async () => {
    const beats: RunnerHeartbeat[] = [];
    const sub = h.nc.subscribe(subjects.runnerHeartbeat(h.runnerId), { callback: (_e, m) => void beats.push(RunnerHeartbeatSchema.parse(m.json())) });
    await waitFor(() => beats.length >= 3, { timeoutMs: 5_000, what: 'three heartbeats' });
    sub.unsubscribe();
    const gaps = beats.slice(1).map((b, i) => Date.parse(b.sentAt) - Date.parse((beats[i] as RunnerHeartbeat).sentAt));
    for (const g of gaps) expect(g).toBeGreaterThan(150);
    const last = beats[beats.length - 1] as RunnerHeartbeat;
    expect(last).toMatchObject({
      runnerId: h.runnerId,
      organizationId: ORG,
      backend: 'local',
      health: 'HEALTHY',
      intervalMs: 300,
      policyEtag: h.runner.policy.current().etag,
      usingDefaultPolicy: false,
    });
    expect(last.capabilities.isolation).toBe('namespaces');
    expect(last.capacity.sandboxesRunning).toBe(h.runner.service.capacity().sandboxesRunning);
    expect(last.capacity.cpuMillisFree).toBeLessThan(64_000);
    expect(last.sequence).toBeGreaterThan((beats[0] as RunnerHeartbeat).sequence);
  });
});

describe('runner service: default policy', () => {
  it('applies the platform default policy when the config file holds none, and says so in heartbeats', async () => {
    const h = await startHarness({ heartbeatIntervalMs: 200 });
    try {
      const beat = await new Promise<RunnerHeartbeat>((resolve) => {
        const sub = h.nc.subscribe(subjects.runnerHeartbeat(h.runnerId), {
          callback: (_e, m) => {
            sub.unsubscribe();
            resolve(RunnerHeartbeatSchema.parse(m.json()));
          },
        });
      });
      expect(beat).toMatchObject({ usingDefaultPolicy: true, policyEtag: null });
    } finally {
      await h.stop();
    }
  });
});

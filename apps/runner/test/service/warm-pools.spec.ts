import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunnerHeartbeatSchema, subjects, type RunnerHeartbeat, type SandboxSpecInput, type WarmPoolInput } from '@paddock/contracts';
import { waitFor } from '@paddock/testing';
import type { ExecRequest, ExecResult, LaunchSpec } from '../../src/backend/sandbox-backend';
import { BASE_IMAGE, ORG, startHarness, type Harness } from '../support/harness';

const MiB = 1024 ** 2;
const RUNNER_CPU_MILLIS = 4_000;
const RUNNER_MEMORY_BYTES = 8 * 1024 ** 3;

/** The pools' template: what an agent's sandbox usually asks for (the image's idle default, small requests). */
const TEMPLATE = {
  containers: [{ name: 'main', image: BASE_IMAGE, resourceRequirements: { requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: '1', memory: '256Mi' } } }],
  maxLifetimeSeconds: 600,
};
const matching = (extra: { env?: Record<string, string>; files?: { path: string; content: string }[]; lifetime?: number; tags?: string[] } = {}): SandboxSpecInput => ({
  containers: [
    {
      name: 'main',
      image: BASE_IMAGE,
      resourceRequirements: TEMPLATE.containers[0]?.resourceRequirements,
      ...(extra.env ? { environmentVariables: extra.env } : {}),
      ...(extra.files ? { files: extra.files.map((f) => ({ path: f.path, content: Buffer.from(f.content).toString('base64') })) } : {}),
    },
  ],
  maxLifetimeSeconds: extra.lifetime ?? 300,
  ...(extra.tags ? { tags: extra.tags } : {}),
});

async function nextHeartbeat(h: Harness, accept: (b: RunnerHeartbeat) => boolean): Promise<RunnerHeartbeat> {
  let seen: RunnerHeartbeat | undefined;
  const sub = h.nc.subscribe(subjects.runnerHeartbeat(h.runnerId), {
    callback: (_e, m) => {
      const b = RunnerHeartbeatSchema.parse(m.json());
      if (!seen && accept(b)) seen = b;
    },
  });
  try {
    return await waitFor(() => seen, { timeoutMs: 15_000, what: 'a heartbeat with the expected pools' });
  } finally {
    sub.unsubscribe();
  }
}

/** The processes of a sandbox's cgroup (the backend names cgroups by the id it launched). */
function cgroupPids(h: Harness, id: string): number[] {
  const [procs] = h.backend.cgroupTree().procsFiles(id);
  try {
    return readFileSync(procs as string, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** A process's command line ('' once it is gone). */
function cmdlineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

describe('runner warm pools on the local backend', () => {
  let h: Harness;
  let configDir: string;
  let configPath: string;
  /** Every launch that reached the local backend, in order: warm fills and cold creates alike. */
  const launched: LaunchSpec[] = [];
  /** Every exec that reached the local backend: the warm sandboxes' primes and the creates' commands. */
  const execs: { sandboxId: string; argv: string[]; result?: ExecResult }[] = [];

  const writeConfig = (warmPools: WarmPoolInput[]): void => {
    const tmp = `${configPath}.tmp`;
    writeFileSync(tmp, JSON.stringify({ revision: 1, policyEtag: 'etag-warm', policy: { constraints: { resources: { defaultCpu: '1', defaultMemory: '256Mi', maxCpu: '2' } } }, warmPools }));
    renameSync(tmp, configPath);
  };
  const pools = (): ReturnType<Harness['runner']['warmPools']['status']> => h.runner.warmPools.status();
  const ready = (name: string): number => pools().find((p) => p.name === name)?.ready ?? -1;
  const waitReady = (name: string, n: number): Promise<unknown> =>
    waitFor(() => ready(name) === n && h.runner.warmPools.memberIds(name).length === n, { timeoutMs: 60_000, what: `pool ${name} at ${n} ready (status: ${JSON.stringify(pools())})` });

  beforeAll(async () => {
    configDir = mkdtempSync(join(tmpdir(), 'paddock-warm-config-'));
    configPath = join(configDir, 'runner.json');
    writeConfig([{ name: 'agents', size: 3, template: TEMPLATE }]);
    h = await startHarness({ configPath, heartbeatIntervalMs: 300, cpuMillis: RUNNER_CPU_MILLIS, memoryBytes: RUNNER_MEMORY_BYTES, sandboxes: 50 });
    const inner = h.backend;
    const launch = inner.launch.bind(inner);
    inner.launch = (spec: LaunchSpec) => {
      launched.push(spec);
      return launch(spec);
    };
    const exec = inner.exec.bind(inner);
    inner.exec = async (sandboxId: string, req: ExecRequest) => {
      const seen: (typeof execs)[number] = { sandboxId, argv: req.argv };
      execs.push(seen);
      seen.result = await exec(sandboxId, req);
      return seen.result;
    };
  }, 60_000);
  afterAll(async () => {
    if (h) {
      writeConfig([]);
      await h.runner.configSettled();
      await waitFor(() => h.runner.warmPools.held().sandboxes === 0, { timeoutMs: 30_000, what: 'every warm sandbox drained' }).catch(() => undefined);
      await h.stop();
    }
    rmSync(configDir, { recursive: true, force: true });
  });

  it('fills a pool to its size, holds its requests of the capacity and reports it in the heartbeat', async () => {
    await waitReady('agents', 3);
    const cap = h.runner.service.capacity();
    expect(cap).toEqual({
      cpuMillisFree: RUNNER_CPU_MILLIS - 3 * 50,
      memoryBytesFree: RUNNER_MEMORY_BYTES - 3 * 64 * MiB,
      sandboxesRunning: 0,
      sandboxesMax: 50,
      sandboxesWarm: 3,
    });
    const beat = await nextHeartbeat(h, (b) => b.warmPoolStatus?.[0]?.ready === 3);
    expect(beat.warmPoolStatus).toMatchObject([{ name: 'agents', size: 3, ready: 3 }]);
    expect(beat.warmPoolStatus?.[0]?.key).toContain('"image":"paddock/base"');
    expect(beat.capacity).toMatchObject({ sandboxesWarm: 3, cpuMillisFree: RUNNER_CPU_MILLIS - 150 });
    // The warm sandboxes are the runner's, not anyone's: no create, no record, nothing listed.
    expect(h.runner.service.list({ organizationId: ORG, showTerminated: true })).toEqual([]);
    for (const id of h.runner.warmPools.memberIds('agents')) expect(cgroupPids(h, id).length).toBeGreaterThan(0);
    // Each ready one was primed: its exec daemon (a fork of the Python supervisor, inside the
    // sandbox's cgroups) already runs, so a take's first command does not start it.
    for (const id of h.runner.warmPools.memberIds('agents')) {
      const cmdlines = cgroupPids(h, id).map(cmdlineOf);
      expect(cmdlines.some((c) => c.includes('python')), `exec daemon in ${id}: ${JSON.stringify(cmdlines)}`).toBe(true);
      // ...and its exec path was run once through (the supervisor's, the daemon's and the
      // spawner's first use), by one exec of a path that exists in no sandbox: nothing ran.
      const primes = execs.filter((e) => e.sandboxId === id);
      expect(primes.map((e) => e.argv)).toEqual([['/proc/self/fd/paddock-warm-up']]);
      expect(primes[0]?.result).toMatchObject({ exitCode: 127, stdoutBytes: 0, timedOut: false });
      expect(primes[0]?.result?.stderr.toString()).toContain('paddock: cannot run /proc/self/fd/paddock-warm-up');
    }
  }, 90_000);

  it("gives a matching create a warm sandbox (no cold launch) with the create's identity, env, files, tags and lifetime", async () => {
    await waitReady('agents', 3);
    const idle = new Set(h.runner.warmPools.memberIds('agents'));
    const launchesBefore = launched.length;
    const coldBefore = h.runner.warmPools.coldLaunches;
    const created = await h.client.call('create', {
      sandboxId: 'warm-user-1',
      organizationId: ORG,
      spec: matching({ env: { GREETING: 'hello from the create' }, files: [{ path: '/workspace/note.txt', content: 'the create wrote this' }], tags: ['agent', 'warm'], lifetime: 4 }),
    });
    await h.waitState('warm-user-1', 'STATE_RUNNING');
    const warmId = h.runner.warmPools.warmIdOf('warm-user-1');
    expect(warmId).toBeDefined();
    expect(idle.has(warmId as string)).toBe(true);
    // The backend never launched the create: only refills of the pool reached it.
    expect(launched.slice(launchesBefore).map((l) => l.sandboxId)).not.toContain('warm-user-1');
    expect(launched.slice(launchesBefore).every((l) => l.sandboxId.startsWith('warm-agents-'))).toBe(true);
    expect(h.runner.warmPools.coldLaunches).toBe(coldBefore);
    // Files written and tie persisted before the reply, which says RUNNING itself; the state event
    // published with it is that last state alone (PENDING and CREATING were superseded in the call).
    expect(created.sandbox.status.state).toBe('STATE_RUNNING');
    expect(h.events.filter((e) => e.sandboxId === 'warm-user-1').map((e) => e.state)).toEqual(['STATE_RUNNING']);

    const r = await h.client.call('exec', {
      sandboxId: 'warm-user-1',
      organizationId: ORG,
      argv: ['sh', '-c', 'echo "$GREETING|$HOSTNAME"; cat /workspace/note.txt'],
    });
    expect(Buffer.from(r.stdoutBase64, 'base64').toString()).toBe('hello from the create|warm-user-1\nthe create wrote this');
    // The only exec the sandbox had before the create's own was the prime, which ran nothing.
    expect(execs.filter((e) => e.sandboxId === warmId).map((e) => e.argv[0])).toEqual(['/proc/self/fd/paddock-warm-up', 'sh']);
    const got = await h.client.call('get', { sandboxId: 'warm-user-1', organizationId: ORG });
    expect(got.sandbox.sandboxId).toBe('warm-user-1');
    expect(got.sandbox.spec.tags).toEqual(['agent', 'warm']);
    expect(got.sandbox.status.effectiveMaxLifetimeSeconds).toBe(4);

    // The pool refills behind the take, and the taken sandbox ends at the create's own deadline
    // (4 s), not the warm sandbox's (600 s).
    await waitReady('agents', 3);
    expect(h.runner.warmPools.memberIds('agents')).not.toContain(warmId);
    const end = await h.waitState('warm-user-1', 'STATE_FAILED', 20_000).catch(async () => h.waitState('warm-user-1', 'STATE_COMPLETED', 1));
    expect(end.reason).toBe('LIFETIME_EXPIRED');
    await waitFor(() => cgroupPids(h, warmId as string).length === 0, { timeoutMs: 15_000, what: 'the taken sandbox gone' });

    // Once the service forgets the ended sandbox, the pools forget its warm id too.
    const takenBefore = h.runner.warmPools.takenCount();
    expect(h.runner.service.pruneTerminated(0)).toBeGreaterThan(0);
    expect(h.runner.warmPools.warmIdOf('warm-user-1')).toBeUndefined();
    expect(h.runner.warmPools.takenCount()).toBe(takenBefore - 1);
  }, 90_000);

  it('pauses and resumes a taken warm sandbox under its create\'s id (the pools pass on every optional operation of their backend)', async () => {
    for (const op of ['pause', 'resume', 'snapshotDisk', 'usage', 'connectPort', 'containerStatuses'] as const) {
      expect(typeof h.runner.warmPools[op], op).toBe('function');
    }
    await waitReady('agents', 3);
    await h.client.call('create', { sandboxId: 'warm-pause-1', organizationId: ORG, spec: matching({ lifetime: 60 }) });
    await h.waitState('warm-pause-1', 'STATE_RUNNING');
    expect(h.runner.warmPools.warmIdOf('warm-pause-1')).toBeDefined();
    expect((await h.client.call('pause', { sandboxId: 'warm-pause-1', organizationId: ORG })).sandbox.status.state).toBe('STATE_PAUSED');
    expect((await h.client.call('resume', { sandboxId: 'warm-pause-1', organizationId: ORG })).sandbox.status.state).toBe('STATE_RUNNING');
    const r = await h.client.call('exec', { sandboxId: 'warm-pause-1', organizationId: ORG, argv: ['echo', 'after resume'] });
    expect(Buffer.from(r.stdoutBase64, 'base64').toString()).toBe('after resume\n');
    await h.client.call('delete', { sandboxId: 'warm-pause-1', organizationId: ORG, gracePeriodSeconds: 0 });
    await waitFor(() => h.runner.service.capacity().sandboxesRunning === 0, { timeoutMs: 15_000, what: 'the taken sandbox stopped' });
  }, 90_000);

  it('starts a create that matches no template cold, without an error', async () => {
    await waitReady('agents', 3);
    const coldBefore = h.runner.warmPools.coldLaunches;
    const spec: SandboxSpecInput = { containers: [{ name: 'main', image: BASE_IMAGE, resources: { cpu: '100m', memory: '128Mi' } }], maxLifetimeSeconds: 300 };
    await h.createRunning('warm-cold-1', spec);
    expect(h.runner.warmPools.warmIdOf('warm-cold-1')).toBeUndefined();
    expect(h.runner.warmPools.coldLaunches).toBe(coldBefore + 1);
    expect(launched.map((l) => l.sandboxId)).toContain('warm-cold-1');
    expect(ready('agents')).toBe(3);
    // A create that matches the resources but not the template's environment is a miss too.
    writeConfig([{ name: 'tagged', size: 3, template: { ...TEMPLATE, containers: [{ ...TEMPLATE.containers[0], environmentVariables: { POOL: 'agents' } }] } }]);
    await waitReady('tagged', 3);
    await h.createRunning('warm-cold-2', matching({ env: { POOL: 'other' } }));
    expect(h.runner.warmPools.warmIdOf('warm-cold-2')).toBeUndefined();
    await h.createRunning('warm-env-hit', matching({ env: { POOL: 'agents', MINE: 'yes' } }));
    expect(h.runner.warmPools.warmIdOf('warm-env-hit')).toBeDefined();
    for (const sandboxId of ['warm-cold-1', 'warm-cold-2', 'warm-env-hit']) await h.client.call('delete', { sandboxId, organizationId: ORG, gracePeriodSeconds: 0 });
    await waitFor(() => h.runner.service.capacity().sandboxesRunning === 0, { timeoutMs: 20_000 });
  }, 120_000);

  it('replaces a warm sandbox that dies while idle', async () => {
    writeConfig([{ name: 'agents', size: 3, template: TEMPLATE }]);
    await h.runner.configSettled();
    await waitReady('agents', 3);
    const [victim] = h.runner.warmPools.memberIds('agents');
    const pids = cgroupPids(h, victim as string);
    expect(pids.length).toBeGreaterThan(0);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch (e) {
        // Already gone with an earlier one (the sandbox's processes die with its namespace's init).
        if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
      }
    }
    await waitFor(() => !h.runner.warmPools.memberIds('agents').includes(victim as string), { timeoutMs: 20_000, what: 'the dead warm sandbox dropped' });
    await waitReady('agents', 3);
    expect(h.runner.warmPools.memberIds('agents')).not.toContain(victim);
    expect(h.runner.service.list({ organizationId: ORG, showTerminated: true }).map((s) => s.sandboxId)).not.toContain(victim);
  }, 90_000);

  it('drains a pool that shrinks, then one that is removed', async () => {
    await waitReady('agents', 3);
    const before = h.runner.warmPools.memberIds('agents');
    writeConfig([{ name: 'agents', size: 1, template: TEMPLATE }]);
    await h.runner.configSettled();
    await waitReady('agents', 1);
    const drained = before.filter((id) => !h.runner.warmPools.memberIds('agents').includes(id));
    expect(drained).toHaveLength(2);
    await waitFor(() => drained.every((id) => !h.backend.cgroupTree().listSandboxes().includes(id)), { timeoutMs: 20_000, what: 'drained cgroups removed' });
    // A drained sandbox holds its capacity until the backend reports it ended.
    await waitFor(() => h.runner.warmPools.held().sandboxes === 1, { timeoutMs: 20_000, what: 'the drained sandboxes released' });
    expect(h.runner.service.capacity()).toMatchObject({ sandboxesWarm: 1, cpuMillisFree: RUNNER_CPU_MILLIS - 50 });

    writeConfig([]);
    await h.runner.configSettled();
    await waitFor(() => h.runner.warmPools.held().sandboxes === 0, { timeoutMs: 20_000, what: 'the removed pool drained' });
    expect(h.runner.warmPools.status()).toEqual([]);
    await waitFor(() => h.backend.cgroupTree().listSandboxes().length === 0, { timeoutMs: 20_000, what: 'no sandbox cgroup left' });
    expect(h.runner.service.capacity()).toEqual({ cpuMillisFree: RUNNER_CPU_MILLIS, memoryBytesFree: RUNNER_MEMORY_BYTES, sandboxesRunning: 0, sandboxesMax: 50 });
  }, 90_000);

  it('reports a template the policy refuses on the pool, naming the constraint, and starts nothing for it', async () => {
    writeConfig([{ name: 'huge', size: 2, template: { containers: [{ name: 'main', image: BASE_IMAGE, resources: { cpu: '64', memory: '256Mi' } }] } }]);
    await waitFor(() => h.runner.warmPools.status()[0]?.name === 'huge', { timeoutMs: 10_000, what: 'the new pool list applied' });
    const [status] = h.runner.warmPools.status();
    expect(status).toMatchObject({ name: 'huge', size: 2, ready: 0 });
    expect(status?.error).toContain('containers[0].resources.cpu');
    await waitFor(() => h.runner.warmPools.held().sandboxes === 0, { timeoutMs: 20_000, what: 'the previous pool drained' });
    // Nothing starts for the refused pool, however long it is given.
    await h.runner.configSettled();
    expect(launched.filter((l) => l.sandboxId.startsWith('warm-huge-'))).toEqual([]);
    writeConfig([]);
    await h.runner.configSettled();
  });
});

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunnerHeartbeatSchema, subjects, type RunnerHeartbeat, type SandboxSpecInput } from '@paddock/contracts';
import { waitFor } from '@paddock/testing';
import { BASE_IMAGE, ORG, startHarness, type Harness } from '../support/harness';

const MiB = 1024 ** 2;
const RUNNER_CPU_MILLIS = 2_000;
const RUNNER_MEMORY_BYTES = 8 * 1024 ** 3;

const burstable = (requests: { cpu: string; memory: string }, limits: { cpu: string; memory: string }): SandboxSpecInput => ({
  containers: [{ name: 'main', image: BASE_IMAGE, resourceRequirements: { requests, limits } }],
  maxLifetimeSeconds: 300,
});

/** The sandbox's cgroup limits as the kernel holds them (the CPU quota in µs per 100 ms period). */
function cgroupLimits(h: Harness, sandboxId: string): { cpuQuotaUs: number; memoryBytes: number; memorySwapBytes?: number } {
  const cg = h.backend.cgroupTree();
  if (cg.mode === 'v1') {
    const [, memory, cpu] = cg.boxDirs(sandboxId) as [string, string, string];
    expect(readFileSync(join(cpu, 'cpu.cfs_period_us'), 'utf8').trim()).toBe('100000');
    let memsw: number | undefined;
    try {
      memsw = Number(readFileSync(join(memory, 'memory.memsw.limit_in_bytes'), 'utf8'));
    } catch {
      memsw = undefined; // the kernel does not account swap here
    }
    return {
      cpuQuotaUs: Number(readFileSync(join(cpu, 'cpu.cfs_quota_us'), 'utf8')),
      memoryBytes: Number(readFileSync(join(memory, 'memory.limit_in_bytes'), 'utf8')),
      ...(memsw !== undefined ? { memorySwapBytes: memsw } : {}),
    };
  }
  const [dir] = cg.boxDirs(sandboxId) as [string];
  const [quota, period] = readFileSync(join(dir, 'cpu.max'), 'utf8').trim().split(' ');
  expect(period).toBe('100000');
  return {
    cpuQuotaUs: Number(quota),
    memoryBytes: Number(readFileSync(join(dir, 'memory.max'), 'utf8')),
    memorySwapBytes: memorySwapV2(dir),
  };
}

/** cgroup v2 states swap apart from memory: 0 allowed means memory + swap equals the memory limit. */
function memorySwapV2(dir: string): number | undefined {
  try {
    return Number(readFileSync(join(dir, 'memory.swap.max'), 'utf8')) + Number(readFileSync(join(dir, 'memory.max'), 'utf8'));
  } catch {
    return undefined;
  }
}

async function nextHeartbeat(h: Harness, accept: (b: RunnerHeartbeat) => boolean): Promise<RunnerHeartbeat> {
  let seen: RunnerHeartbeat | undefined;
  const sub = h.nc.subscribe(subjects.runnerHeartbeat(h.runnerId), {
    callback: (_e, m) => {
      const b = RunnerHeartbeatSchema.parse(m.json());
      if (!seen && accept(b)) seen = b;
    },
  });
  try {
    return await waitFor(() => seen, { timeoutMs: 10_000, what: 'a heartbeat with the expected capacity' });
  } finally {
    sub.unsubscribe();
  }
}

/**
 * Requests below limits on the local backend, as on Kubernetes: capacity (what the runner admits
 * and reports in heartbeats, which the gateway places by) counts requests; the cgroups cap each
 * sandbox at its limits.
 */
describe('runner service: capacity counts requests, cgroups enforce limits', () => {
  let h: Harness;
  let configDir: string;
  beforeAll(async () => {
    configDir = mkdtempSync(join(tmpdir(), 'paddock-density-config-'));
    const configPath = join(configDir, 'runner.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        revision: 1,
        policyEtag: 'etag-burstable',
        policy: {
          constraints: {
            resources: { defaultCpu: '1', defaultMemory: '512Mi', defaultCpuRequest: '100m', defaultMemoryRequest: '128Mi' },
          },
        },
      }),
    );
    h = await startHarness({ configPath, heartbeatIntervalMs: 300, cpuMillis: RUNNER_CPU_MILLIS, memoryBytes: RUNNER_MEMORY_BYTES, sandboxes: 200 });
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
    rmSync(configDir, { recursive: true, force: true });
  });

  it('fits 30 sandboxes of 10m / 32Mi requests on a 2-CPU runner, each capped at its 1 CPU / 256Mi limits', async () => {
    const ids = Array.from({ length: 30 }, (_, i) => `dense-${i}`);
    const spec = burstable({ cpu: '10m', memory: '32Mi' }, { cpu: '1', memory: '256Mi' });
    // In batches: the point is how many fit at once, not how fast a burst launches on this host.
    for (let i = 0; i < ids.length; i += 6) {
      const batch = ids.slice(i, i + 6);
      await Promise.all(batch.map((sandboxId) => h.client.call('create', { sandboxId, organizationId: ORG, spec })));
      await Promise.all(batch.map((id) => h.waitState(id, 'STATE_RUNNING', 60_000)));
    }
    const cap = h.runner.service.capacity();
    expect(cap).toEqual({
      cpuMillisFree: RUNNER_CPU_MILLIS - 30 * 10,
      memoryBytesFree: RUNNER_MEMORY_BYTES - 30 * 32 * MiB,
      sandboxesRunning: 30,
      sandboxesMax: 200,
    });
    const beat = await nextHeartbeat(h, (b) => b.capacity.sandboxesRunning === 30);
    expect(beat.capacity).toEqual(cap);
    for (const id of ids) {
      expect(cgroupLimits(h, id)).toMatchObject({ cpuQuotaUs: 100_000, memoryBytes: 256 * MiB });
      const swap = cgroupLimits(h, id).memorySwapBytes;
      if (swap !== undefined) expect(swap).toBe(256 * MiB);
    }
    const got = await h.client.call('get', { sandboxId: 'dense-0', organizationId: ORG });
    expect(got.sandbox.status.effectiveResourceRequirements?.[0]).toMatchObject({
      requests: { cpu: '10m', memory: '32Mi' },
      limits: { cpu: '1', memory: '256Mi' },
    });

    // Requests still bound admission: what is left (1700m) cannot hold an 1800m request.
    const refused = await h.client.callError('create', {
      sandboxId: 'dense-too-big',
      organizationId: ORG,
      spec: burstable({ cpu: '1800m', memory: '32Mi' }, { cpu: '2', memory: '256Mi' }),
    });
    expect(refused.reason).toBe('CWSANDBOX_RUNNER_AT_CAPACITY');
    expect(refused.message).toContain('1800m CPU wanted, 1700m free');

    await Promise.all(ids.map((sandboxId) => h.client.call('delete', { sandboxId, organizationId: ORG, gracePeriodSeconds: 0 })));
    await waitFor(() => h.runner.service.capacity().sandboxesRunning === 0, { timeoutMs: 30_000, what: 'every dense sandbox stopped' });
    expect(h.runner.service.capacity().cpuMillisFree).toBe(RUNNER_CPU_MILLIS);
  }, 240_000);

  it('writes a CPU limit below one CPU as the steady quota, while the reservation stays the request', async () => {
    await h.createRunning('dense-quota', burstable({ cpu: '10m', memory: '32Mi' }, { cpu: '300m', memory: '64Mi' }));
    expect(cgroupLimits(h, 'dense-quota')).toMatchObject({ cpuQuotaUs: 30_000, memoryBytes: 64 * MiB });
    expect(h.runner.service.capacity().cpuMillisFree).toBe(RUNNER_CPU_MILLIS - 10);
    await h.client.call('delete', { sandboxId: 'dense-quota', organizationId: ORG, gracePeriodSeconds: 0 });
    await waitFor(() => h.runner.service.capacity().sandboxesRunning === 0, { timeoutMs: 15_000 });
  }, 60_000);

  it('gives a sandbox that declares no resources the policy default requests under its default limits', async () => {
    await h.createRunning('dense-default', { containers: [{ name: 'main', image: BASE_IMAGE }], maxLifetimeSeconds: 300 });
    expect(h.runner.service.capacity()).toMatchObject({ cpuMillisFree: RUNNER_CPU_MILLIS - 100, memoryBytesFree: RUNNER_MEMORY_BYTES - 128 * MiB });
    expect(cgroupLimits(h, 'dense-default')).toMatchObject({ cpuQuotaUs: 100_000, memoryBytes: 512 * MiB });
    await h.client.call('delete', { sandboxId: 'dense-default', organizationId: ORG, gracePeriodSeconds: 0 });
    await waitFor(() => h.runner.service.capacity().sandboxesRunning === 0, { timeoutMs: 15_000 });
  }, 60_000);

  it('refuses requests above limits, naming each limit field, before anything starts', async () => {
    const before = h.events.length;
    const err = await h.client.callError('create', {
      sandboxId: 'dense-inverted',
      organizationId: ORG,
      spec: burstable({ cpu: '2', memory: '512Mi' }, { cpu: '1', memory: '256Mi' }),
    });
    expect(err.reason).toBe('CWSANDBOX_POLICY_VIOLATION');
    expect(err.violations.map((v) => v.field).sort()).toEqual([
      'containers[0].resourceRequirements.limits.cpu',
      'containers[0].resourceRequirements.limits.memory',
    ]);
    for (const v of err.violations) expect(v.description).toContain('is below the request');
    expect(h.events.slice(before).filter((e) => e.sandboxId === 'dense-inverted')).toEqual([]);
    expect(h.backend.cgroupTree().listSandboxes()).not.toContain('dense-inverted');
  });
});

import { PaddockError, type SandboxStateEvent } from '@paddock/contracts';
import { waitFor } from '@paddock/testing';
import { PolicyHolder } from '../../src/policy/policy-holder';
import { RUNNER_ID_LABEL, SANDBOX_META_LABEL } from '../../src/service/launch-spec';
import type { PersistedSandboxMeta } from '../../src/service/launch-spec';
import { SandboxService, type RunnerLogger } from '../../src/service/sandbox-service';
import { MemoryBackend } from '../support/memory-backend';

const quiet: RunnerLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };
const identity = { runnerId: 'r1', organizationId: 'org-1', clusterId: 'c1', zone: 'z1', runnerGroupId: 'default' };
const small = { containers: [{ name: 'main', image: 'local', resources: { cpu: '100m', memory: '64Mi' } }] };

function setup(opts: { sandboxes?: number; cpuMillis?: number } = {}) {
  const backend = new MemoryBackend();
  const policy = new PolicyHolder();
  const events: SandboxStateEvent[] = [];
  const service = new SandboxService({
    backend,
    identity,
    policy,
    capacity: { cpuMillis: opts.cpuMillis ?? 64_000, memoryBytes: 64 * 1024 ** 3, sandboxes: opts.sandboxes ?? 100 },
    caps: { pidsMax: 256, diskBytes: 1024 ** 3, openFilesMax: 1024 },
    publishState: (e) => events.push(e),
    clock: { now: () => new Date() },
    log: quiet,
  });
  return { backend, policy, events, service };
}

async function expectError(p: Promise<unknown> | (() => unknown)): Promise<PaddockError> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    if (e instanceof PaddockError) return e;
    throw e;
  }
  throw new Error('expected a PaddockError');
}

describe('SandboxService.create', () => {
  it('replies at once in STATE_PENDING or STATE_CREATING, then reports RUNNING through state events', async () => {
    const { service, events, backend } = setup();
    backend.autoRun = false;
    const sb = await service.create({ sandboxId: 'sb-1', organizationId: 'org-1', spec: small });
    expect(['STATE_PENDING', 'STATE_CREATING']).toContain(sb.status.state);
    expect(sb.status.runnerId).toBe('r1');
    expect(sb.status.effectiveResources).toMatchObject({ cpu: '100m', memory: '64Mi' });
    await waitFor(() => events.some((e) => e.state === 'STATE_CREATING'));
    backend.markRunning('sb-1');
    expect(events.map((e) => e.state)).toEqual(['STATE_PENDING', 'STATE_CREATING', 'STATE_RUNNING']);
    const seqs = events.map((e) => e.sequence);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(service.get({ sandboxId: 'sb-1', organizationId: 'org-1' }).status.startTime).toBeDefined();
  });

  it('launches with the primary container limits, the lifetime and no network when egress is denied', async () => {
    const { service, backend } = setup();
    await service.create({
      sandboxId: 'sb-net',
      organizationId: 'org-1',
      spec: {
        ...small,
        maxLifetimeSeconds: 120,
        network: { denyEgress: true },
        containers: [{ ...small.containers[0], command: ['/bin/sh', '-c'], args: ['sleep 1'], environmentVariables: { A: '1' } }],
      },
    });
    const launch = backend.launches[0];
    expect(launch).toMatchObject({
      cpuMillis: 100,
      memoryBytes: 64 * 1024 ** 2,
      lifetimeSeconds: 120,
      network: 'none',
      command: ['/bin/sh', '-c', 'sleep 1'],
      env: { A: '1' },
      pidsMax: 256,
    });
    expect(launch?.labels[RUNNER_ID_LABEL]).toBe('r1');
  });

  it('hands the resolved CIDR egress grants to the backend, with their exceptions and ports, and nothing wider', async () => {
    const { service, backend } = setup();
    await service.create({
      sandboxId: 'sb-cidr',
      organizationId: 'org-1',
      spec: {
        ...small,
        network: {
          egress: [
            { cidr: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] }, ports: [{ port: 443 }, { protocol: 'UDP', port: 5000, endPort: 5010 }] },
            { cidr: { cidr: '203.0.113.7/32' } },
          ],
        },
      },
    });
    await service.create({ sandboxId: 'sb-open', organizationId: 'org-1', spec: small });
    const [cidr, open] = backend.launches;
    expect(cidr?.network).toBe('none');
    expect(cidr?.egressCidrs).toEqual([
      { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'], ports: [{ protocol: 'TCP', port: 443 }, { protocol: 'UDP', port: 5000, endPort: 5010 }] },
      { cidr: '203.0.113.7/32', except: [], ports: [] },
    ]);
    // No rule requested and none by default: the runner's open default, and no grant list.
    expect(open?.network).toBe('host');
    expect(open?.egressCidrs).toBeUndefined();
  });

  it('hands the resolved runtime class (pin or policy default) to a runtime-class backend', async () => {
    const { service, backend, policy } = setup();
    backend.caps = { ...backend.caps, isolation: 'runtime-class', runtimeClasses: ['gvisor', 'kata'] };
    policy.set({ constraints: { security: { allowedRuntimeClasses: ['gvisor', 'kata'], defaultCpuRuntimeClass: 'gvisor' } } }, 'rc-1');
    await service.create({ sandboxId: 'sb-default-rc', organizationId: 'org-1', spec: small });
    await service.create({ sandboxId: 'sb-pinned-rc', organizationId: 'org-1', spec: { ...small, runtimeClass: 'kata' } });
    expect(backend.launches.map((l) => [l.sandboxId, l.runtimeClassName])).toEqual([
      ['sb-default-rc', 'gvisor'],
      ['sb-pinned-rc', 'kata'],
    ]);
  });

  it('refuses a spec feature its backend does not declare, naming the field, and launches nothing', async () => {
    const { service, backend } = setup();
    backend.caps = { ...backend.caps, specFeatures: backend.caps.specFeatures.filter((f) => f !== 'startupProbe' && f !== 'annotations') };
    const spec = { ...small, annotations: { team: 'ml' }, containers: [{ ...small.containers[0], startupProbe: { httpGet: { port: 8000 } } }] };
    const refused = await expectError(service.create({ sandboxId: 'sb-probe', organizationId: 'org-1', spec }));
    expect(refused.reason).toBe('CWSANDBOX_POLICY_VIOLATION');
    expect(refused.violations?.map((v) => [v.field, v.rule])).toEqual([
      ['annotations', 'runner_capability'],
      ['containers[0].startupProbe', 'runner_capability'],
    ]);
    expect(backend.launches).toEqual([]);
  });

  it('refuses a GPU request on a runner with no GPUs, naming the capability, and hands the count to one that has them', async () => {
    const gpuSpec = { containers: [{ ...small.containers[0], resources: { cpu: '100m', memory: '64Mi', gpu: { count: 1 } } }] };
    const none = setup();
    none.backend.caps = { ...none.backend.caps, maxGpuCount: 0 };
    const refused = await expectError(none.service.create({ sandboxId: 'sb-gpu', organizationId: 'org-1', spec: gpuSpec }));
    expect(refused.reason).toBe('CWSANDBOX_POLICY_VIOLATION');
    expect(refused.violations).toEqual([
      expect.objectContaining({ field: 'containers[0].resources.gpu.count', rule: 'runner_capability', description: 'containers[0].resources.gpu.count: requested 1 GPU(s) but the runner has no GPUs to attach; pick a GPU runner', limit: 0 }),
    ]);
    expect(none.backend.launches).toEqual([]);

    const some = setup();
    some.backend.caps = { ...some.backend.caps, maxGpuCount: 2 };
    await some.service.create({ sandboxId: 'sb-gpu', organizationId: 'org-1', spec: gpuSpec });
    const typed = { containers: [{ ...small.containers[0], resources: { cpu: '100m', memory: '64Mi', gpu: { count: 2, type: 'H100' } } }] };
    await some.service.create({ sandboxId: 'sb-h100', organizationId: 'org-1', spec: typed });
    expect(some.backend.launches.map((l) => [l.sandboxId, l.gpuCount, l.gpuType])).toEqual([
      ['sb-gpu', 1, undefined],
      ['sb-h100', 2, 'H100'],
    ]);
  });

  it('makes no second sandbox for a redelivered create, and refuses the same id with another spec', async () => {
    const { service, backend } = setup();
    const req = { sandboxId: 'sb-dup', organizationId: 'org-1', spec: small };
    const [a, b] = await Promise.all([service.create(req), service.create(req)]);
    const c = await service.create(req);
    expect(backend.launches).toHaveLength(1);
    expect(b.sandboxId).toBe(a.sandboxId);
    expect(c.status.createTime).toBe(a.status.createTime);
    const err = await expectError(service.create({ ...req, spec: { ...small, tags: ['other'] } }));
    expect(err.code).toBe('already_exists');
    expect(backend.launches).toHaveLength(1);
  });

  it('rejects a spec over the policy maximums naming every violated constraint, and starts nothing', async () => {
    const { service, backend, policy, events } = setup();
    policy.set({ constraints: { resources: { maxCpu: '1', maxMemory: '1Gi' }, lifecycle: { defaultLifetimeSeconds: 60 } } }, 'etag-1');
    const err = await expectError(
      service.create({
        sandboxId: 'sb-big',
        organizationId: 'org-1',
        spec: { containers: [{ name: 'main', image: 'local', resources: { cpu: '4', memory: '8Gi' } }] },
      }),
    );
    expect(err.code).toBe('invalid_argument');
    expect(err.reason).toBe('CWSANDBOX_POLICY_VIOLATION');
    const fields = err.violations.map((v) => v.field).join(' ');
    expect(fields).toMatch(/cpu/);
    expect(fields).toMatch(/memory/);
    expect(err.violations.length).toBeGreaterThanOrEqual(2);
    expect(backend.launches).toHaveLength(0);
    expect(events).toHaveLength(0);
    await expectError(() => service.get({ sandboxId: 'sb-big', organizationId: 'org-1' }));
  });

  it('refuses with RUNNER_AT_CAPACITY when the sandbox slots or the CPU are used up', async () => {
    const { service } = setup({ sandboxes: 1, cpuMillis: 150 });
    await service.create({ sandboxId: 'a', organizationId: 'org-1', spec: small });
    const slots = await expectError(service.create({ sandboxId: 'b', organizationId: 'org-1', spec: small }));
    expect(slots.code).toBe('resource_exhausted');
    expect(slots.reason).toBe('CWSANDBOX_RUNNER_AT_CAPACITY');
    const cpu = setup({ cpuMillis: 150 });
    await cpu.service.create({ sandboxId: 'a', organizationId: 'org-1', spec: small });
    const err = await expectError(cpu.service.create({ sandboxId: 'b', organizationId: 'org-1', spec: small }));
    expect(err.message).toMatch(/CPU/);
  });

  it('applies a new policy to the next sandbox only', async () => {
    const { service, policy, backend } = setup();
    const bare = { containers: [{ name: 'main', image: 'local' }] };
    policy.set({ constraints: { resources: { defaultCpu: '250m', defaultMemory: '128Mi' } } }, 'v1');
    await service.create({ sandboxId: 'old', organizationId: 'org-1', spec: bare });
    policy.set({ constraints: { resources: { defaultCpu: '500m', defaultMemory: '256Mi' } } }, 'v2');
    await service.create({ sandboxId: 'new', organizationId: 'org-1', spec: bare });
    expect(service.get({ sandboxId: 'old', organizationId: 'org-1' }).status.effectiveResources).toMatchObject({ cpu: '250m' });
    expect(service.get({ sandboxId: 'new', organizationId: 'org-1' }).status.effectiveResources).toMatchObject({ cpu: '500m' });
    expect(backend.launches.map((l) => l.cpuMillis)).toEqual([250, 500]);
  });
});

describe('SandboxService lifecycle', () => {
  it('stops on delete with the user reason, immediate when the grace period is 0', async () => {
    const { service, backend, events } = setup();
    await service.create({ sandboxId: 'sb-del', organizationId: 'org-1', spec: small });
    await waitFor(() => service.get({ sandboxId: 'sb-del', organizationId: 'org-1' }).status.state === 'STATE_RUNNING');
    const r = service.delete({ sandboxId: 'sb-del', organizationId: 'org-1', gracePeriodSeconds: 0 });
    expect(r.sandbox?.status.state).toBe('STATE_TERMINATING');
    expect(backend.stops).toEqual([{ sandboxId: 'sb-del', grace: 0, reason: 'STOPPED_BY_USER' }]);
    await waitFor(() => events.some((e) => e.state === 'STATE_COMPLETED'));
    const final = service.get({ sandboxId: 'sb-del', organizationId: 'org-1' });
    expect(final.status).toMatchObject({ state: 'STATE_COMPLETED', stateReason: 'STOPPED_BY_USER', exitCode: 137 });
    expect(final.status.endTime).toBeDefined();
    expect(service.capacity().sandboxesRunning).toBe(0);
  });

  it('keeps the exit code when the sandbox completes on its own, and ignores a late stale event', async () => {
    const { service, backend, events } = setup();
    await service.create({ sandboxId: 'sb-exit', organizationId: 'org-1', spec: small });
    await waitFor(() => events.some((e) => e.state === 'STATE_RUNNING'));
    backend.finish('sb-exit', 3);
    backend.markRunning('sb-exit');
    const sb = service.get({ sandboxId: 'sb-exit', organizationId: 'org-1' });
    expect(sb.status).toMatchObject({ state: 'STATE_FAILED', exitCode: 3, stateReason: 'EXITED' });
    expect(events.filter((e) => e.sandboxId === 'sb-exit').map((e) => e.state)).toEqual([
      'STATE_PENDING',
      'STATE_CREATING',
      'STATE_RUNNING',
      'STATE_FAILED',
    ]);
  });

  it('enforces the resolved lifetime with its own timer', async () => {
    const { service, backend } = setup();
    await service.create({ sandboxId: 'sb-life', organizationId: 'org-1', spec: { ...small, maxLifetimeSeconds: 1 } });
    await waitFor(() => backend.stops.length > 0, { timeoutMs: 5_000 });
    expect(backend.stops[0]).toMatchObject({ sandboxId: 'sb-life', reason: 'LIFETIME_EXPIRED', grace: 0 });
    await waitFor(() => service.get({ sandboxId: 'sb-life', organizationId: 'org-1' }).status.stateReason === 'LIFETIME_EXPIRED');
  });

  it('refuses exec on a sandbox that is not running yet, and hides other tenants’ sandboxes', async () => {
    const { service, backend } = setup();
    backend.autoRun = false;
    await service.create({ sandboxId: 'sb-wait', organizationId: 'org-1', spec: small });
    const notRunning = await expectError(service.exec({ sandboxId: 'sb-wait', organizationId: 'org-1', argv: ['true'] }));
    expect(notRunning.reason).toBe('CWSANDBOX_SANDBOX_NOT_RUNNING');
    const other = await expectError(() => service.get({ sandboxId: 'sb-wait', organizationId: 'org-2' }));
    expect(other.reason).toBe('CWSANDBOX_SANDBOX_NOT_FOUND');
    expect(service.list({ organizationId: 'org-2' })).toEqual([]);
    expect(service.list({ organizationId: 'org-1' }).map((s) => s.sandboxId)).toEqual(['sb-wait']);
  });
});

describe('SandboxService.recover', () => {
  it('adopts what it launched, reaps the unknown and the expired, and reports each terminal with a reason', async () => {
    const first = setup();
    await first.service.create({ sandboxId: 'keep', organizationId: 'org-1', spec: small });
    const labels = first.backend.launches[0]?.labels ?? {};
    const now = Date.now();
    const second = setup();
    second.backend.recoverable = [
      { sandboxId: 'keep', labels, state: 'STATE_RUNNING', startedAt: new Date(now - 1000), deadline: new Date(now + 60_000) },
      { sandboxId: 'stranger', labels: {}, state: 'STATE_RUNNING', startedAt: new Date(now), deadline: new Date(now + 60_000) },
      { sandboxId: 'expired', labels, state: 'STATE_RUNNING', startedAt: new Date(now - 5000), deadline: new Date(now - 1) },
      {
        sandboxId: 'foreign',
        labels: { ...labels, [RUNNER_ID_LABEL]: 'r-other' },
        state: 'STATE_RUNNING',
        startedAt: new Date(now),
        deadline: new Date(now + 60_000),
      },
      {
        sandboxId: 'cut-short',
        labels,
        state: 'STATE_RUNNING',
        startedAt: new Date(now),
        deadline: new Date(now + 60_000),
        unrecoverable: { reason: 'FAILED_TO_START', message: 'launch files were never written' },
      },
    ];
    const report = await second.service.recover();
    expect(report.adopted).toEqual(['keep']);
    expect(report.reaped).toEqual([
      { sandboxId: 'stranger', reason: 'REAPED_UNKNOWN' },
      { sandboxId: 'expired', reason: 'LIFETIME_EXPIRED' },
      { sandboxId: 'foreign', reason: 'REAPED_UNKNOWN' },
      { sandboxId: 'cut-short', reason: 'FAILED_TO_START' },
    ]);
    expect(second.backend.reaped.map((r) => r.sandboxId)).toEqual(['stranger', 'expired', 'foreign', 'cut-short']);
    const kept = second.service.get({ sandboxId: 'keep', organizationId: 'org-1' });
    expect(kept.status.state).toBe('STATE_RUNNING');
    expect(kept.status.effectiveResources).toMatchObject({ cpu: '100m' });
    expect((JSON.parse(labels[SANDBOX_META_LABEL] ?? '{}') as Partial<PersistedSandboxMeta>).spec).toEqual(kept.spec);
    const terminal = second.events.filter((e) => e.state === 'STATE_FAILED');
    expect(terminal.map((e) => [e.sandboxId, e.reason])).toEqual([
      ['stranger', 'REAPED_UNKNOWN'],
      ['expired', 'LIFETIME_EXPIRED'],
      ['foreign', 'REAPED_UNKNOWN'],
      ['cut-short', 'FAILED_TO_START'],
    ]);
    // The backend's explanation reaches the user, not a generic one.
    expect(second.service.get({ sandboxId: 'cut-short', organizationId: 'org-1' }).status).toMatchObject({ stateReason: 'FAILED_TO_START', message: 'launch files were never written' });
    // The adopted sandbox is re-announced so a gateway that missed events converges.
    expect(second.events.find((e) => e.sandboxId === 'keep')?.state).toBe('STATE_RUNNING');
    expect(second.service.capacity().sandboxesRunning).toBe(1);
  });

  it('reports the end of a sandbox the backend found dead during recovery, so nothing is unaccounted for', () => {
    const { service, backend, events } = setup();
    backend.emit({ sandboxId: 'ghost', state: 'STATE_RUNNING' });
    expect(events).toEqual([]);
    backend.emit({ sandboxId: 'ghost', state: 'STATE_FAILED', reason: 'RUNNER_LOST', message: 'reaped by the runner (RUNNER_LOST)' });
    expect(events.map((e) => [e.sandboxId, e.state, e.reason, e.organizationId])).toEqual([['ghost', 'STATE_FAILED', 'RUNNER_LOST', 'org-1']]);
    expect(service.get({ sandboxId: 'ghost', organizationId: 'org-1' }).status).toMatchObject({ state: 'STATE_FAILED', stateReason: 'RUNNER_LOST' });
    expect(service.capacity().sandboxesRunning).toBe(0);
  });

  it('forgets ended sandboxes after the retention period, keeping live ones', async () => {
    const { service, backend, events } = setup();
    await service.create({ sandboxId: 'done', organizationId: 'org-1', spec: small });
    await service.create({ sandboxId: 'live', organizationId: 'org-1', spec: small });
    await waitFor(() => events.filter((e) => e.state === 'STATE_RUNNING').length === 2);
    backend.finish('done', 0);
    expect(service.pruneTerminated(60_000)).toBe(0);
    expect(service.pruneTerminated(-1)).toBe(1);
    expect(service.list({ organizationId: 'org-1', showTerminated: true }).map((s) => s.sandboxId)).toEqual(['live']);
  });
});

import { rmSync } from 'node:fs';
import type { K8sTestServer } from '@paddock/k8s-testserver';
import { waitFor } from '@paddock/testing';
import { ANNOTATIONS, WARM_POOL_LABEL, type SandboxStateEvent } from '@paddock/contracts';
import { KubernetesBackend, podNameFor } from '../../src/backend/kubernetes';
import type { LaunchSpec } from '../../src/backend/sandbox-backend';
import { PolicyHolder } from '../../src/policy/policy-holder';
import { SandboxService, type RunnerLogger } from '../../src/service/sandbox-service';
import { WarmPoolBackend } from '../../src/service/warm-pools';
import { createRestrictedNamespace, runnerKubeConfig, startRunnerK8sServer } from './support';

const NS = 'paddock-sandboxes-runner-warm';
/** The API test server runs a pod's commands on the host, so a create's file lands at this host path. */
const NOTE = `/tmp/paddock-warm-k8s-note-${process.pid}.txt`;
const ORG = 'org-1';
const logged: string[] = [];
const quiet: RunnerLogger = { info: () => undefined, warn: (m, f) => void logged.push(`${m} ${JSON.stringify(f)}`), error: (m, f) => void logged.push(`${m} ${JSON.stringify(f)}`) };
const identity = { runnerId: 'runner-warm', organizationId: ORG, clusterId: 'c1', zone: 'z1', runnerGroupId: 'default' };
const TEMPLATE = { containers: [{ name: 'main', image: 'paddock/base:1', resources: { cpu: '100m', memory: '128Mi' } }], maxLifetimeSeconds: 600 };
const matching = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  containers: [{ ...TEMPLATE.containers[0], ...extra }],
  // The template's own lifetime: a warm sandbox taken at any time can still grant all of it.
  maxLifetimeSeconds: 600,
});

/**
 * Warm pools on the Kubernetes backend: the pool's sandboxes are pods already running (on the API
 * test server, which schedules and runs them), and a take hands one of them to a create.
 */
describe('runner warm pools on the Kubernetes backend (API test server)', () => {
  let server: K8sTestServer;
  let inner: KubernetesBackend;
  let pools: WarmPoolBackend;
  let service: SandboxService;
  const events: SandboxStateEvent[] = [];
  const launched: LaunchSpec[] = [];
  const pods = (): string[] => server.list('v1', 'Pod', NS).map((p) => p.metadata?.name ?? '');
  const ready = (): number => pools.status()[0]?.ready ?? -1;
  const stateOf = (id: string): string | undefined => service.list({ organizationId: ORG, showTerminated: true }).find((s) => s.sandboxId === id)?.status.state;

  beforeAll(async () => {
    server = await startRunnerK8sServer({ nodes: [{ name: 'node-1' }] });
    await createRestrictedNamespace(server.kubeConfig(), NS);
    inner = new KubernetesBackend({ runnerId: identity.runnerId, namespace: NS, kubeConfig: runnerKubeConfig(server, NS), runtimeClasses: [] });
    const launch = inner.launch.bind(inner);
    inner.launch = (spec: LaunchSpec) => {
      launched.push(spec);
      return launch(spec);
    };
    const policy = new PolicyHolder();
    pools = new WarmPoolBackend({ inner, policy, identity, caps: { pidsMax: 256, diskBytes: 1024 ** 3, openFilesMax: 1024 }, clock: { now: () => new Date() }, log: quiet });
    service = new SandboxService({
      backend: pools,
      identity,
      policy,
      capacity: { cpuMillis: 64_000, memoryBytes: 64 * 1024 ** 3, sandboxes: 500 },
      caps: { pidsMax: 256, diskBytes: 1024 ** 3, openFilesMax: 1024 },
      publishState: (e) => events.push(e),
      clock: { now: () => new Date() },
      log: quiet,
      warm: pools,
    });
    pools.bindCapacity(() => service.capacity());
  });
  afterAll(async () => {
    service?.close();
    await pools?.close();
    await server?.close();
    rmSync(NOTE, { force: true });
  });

  it('fills a pool with running pods, and a matching create takes one without a pod of its own', async () => {
    pools.configure([{ name: 'agents', size: 4, template: TEMPLATE }]);
    await waitFor(() => ready() === 4, { timeoutMs: 30_000, what: `4 warm pods ready (${JSON.stringify(pools.status())})` });
    const warmPods = pools.memberIds('agents').map(podNameFor);
    expect(pods().sort()).toEqual([...warmPods].sort());
    for (const name of warmPods) {
      const launchLabels = JSON.parse(server.get('v1', 'Pod', name, NS)?.metadata?.annotations?.[ANNOTATIONS.launchLabels] ?? '{}') as Record<string, string>;
      expect(launchLabels[WARM_POOL_LABEL]).toBe('agents');
    }
    expect(service.capacity()).toMatchObject({ sandboxesWarm: 4, cpuMillisFree: 64_000 - 400 });

    await service.create({
      sandboxId: 'k8s-user-1',
      organizationId: ORG,
      spec: matching({ environmentVariables: { GREETING: 'hi from the create' }, files: [{ path: NOTE, content: Buffer.from('mine').toString('base64') }] }),
    });
    await waitFor(() => stateOf('k8s-user-1') === 'STATE_RUNNING', { timeoutMs: 15_000, what: `the taken sandbox RUNNING (${JSON.stringify(events.filter((e) => e.sandboxId === 'k8s-user-1'))} ${logged.join(' / ')})` });
    const warmId = pools.warmIdOf('k8s-user-1') as string;
    expect(warmPods).toContain(podNameFor(warmId));
    expect(launched.map((l) => l.sandboxId)).not.toContain('k8s-user-1');
    expect(pods()).not.toContain(podNameFor('k8s-user-1'));
    const r = await pools.exec('k8s-user-1', { argv: ['sh', '-c', 'echo "$GREETING|$HOSTNAME"; cat "$1"', 'sh', NOTE] });
    expect(r.stdout.toString()).toBe('hi from the create|k8s-user-1\nmine');
    await waitFor(() => ready() === 4, { timeoutMs: 30_000, what: 'the pool refilled' });

    // Deleting the create deletes the warm pod it was given.
    service.delete({ sandboxId: 'k8s-user-1', organizationId: ORG, gracePeriodSeconds: 0 });
    await waitFor(() => stateOf('k8s-user-1') === 'STATE_FAILED' || stateOf('k8s-user-1') === 'STATE_COMPLETED', { timeoutMs: 15_000 });
    await waitFor(() => !pods().includes(podNameFor(warmId)), { timeoutMs: 15_000, what: 'the taken pod deleted' });
  }, 60_000);

  it('starts a non-matching create cold with a pod of its own', async () => {
    await service.create({ sandboxId: 'k8s-cold-1', organizationId: ORG, spec: matching({ resources: { cpu: '200m', memory: '128Mi' } }) });
    await waitFor(() => stateOf('k8s-cold-1') === 'STATE_RUNNING', { timeoutMs: 15_000 });
    expect(pools.warmIdOf('k8s-cold-1')).toBeUndefined();
    expect(pods()).toContain(podNameFor('k8s-cold-1'));
    service.delete({ sandboxId: 'k8s-cold-1', organizationId: ORG, gracePeriodSeconds: 0 });
  }, 30_000);

  it('never hands one warm sandbox to two creates: 100 concurrent takes on a pool of 20', async () => {
    pools.configure([{ name: 'agents', size: 20, template: TEMPLATE }]);
    await waitFor(() => ready() === 20, { timeoutMs: 60_000, what: `20 warm pods ready (${JSON.stringify(pools.status())})` });
    const ids = Array.from({ length: 100 }, (_, i) => `k8s-burst-${i}`);
    await Promise.all(ids.map((sandboxId) => service.create({ sandboxId, organizationId: ORG, spec: matching() })));
    await waitFor(() => ids.every((id) => stateOf(id) === 'STATE_RUNNING'), { timeoutMs: 60_000, what: 'every burst sandbox RUNNING' });
    const warm = ids.map((id) => pools.warmIdOf(id)).filter((w): w is string => w !== undefined);
    expect(warm.length).toBeGreaterThanOrEqual(20);
    expect(new Set(warm).size).toBe(warm.length);
    // Every create runs on exactly one pod, and no pod serves two: warm ones by their warm name,
    // the rest cold by their own.
    const served = ids.map((id) => podNameFor(pools.warmIdOf(id) ?? id));
    expect(new Set(served).size).toBe(100);
    for (const name of served) expect(pods()).toContain(name);
    expect(pools.warmTakes + pools.coldLaunches).toBeGreaterThanOrEqual(100);

    for (const sandboxId of ids) service.delete({ sandboxId, organizationId: ORG, gracePeriodSeconds: 0 });
    pools.configure([]);
    await waitFor(() => pods().length === 0, { timeoutMs: 60_000, what: `every pod deleted (left: ${pods().length}: ${pods().slice(0, 5).join(', ')}; ${JSON.stringify(pools.status())} held ${JSON.stringify(pools.held())} ${logged.slice(0, 3).join(' / ')})` });
    await waitFor(() => pools.held().sandboxes === 0, { timeoutMs: 15_000, what: `no warm capacity held (${JSON.stringify(pools.held())})` });
    expect(pools.status()).toEqual([]);
  }, 120_000);
});

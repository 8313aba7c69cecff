import * as k8s from '@kubernetes/client-node';
import type { K8sTestServer } from '@paddock/k8s-testserver';
import { waitFor } from '@paddock/testing';
import { KubernetesBackend, podNameFor } from '../../src/backend/kubernetes';
import { takeEnvSecretNameFor, WARM_TAKE_ANNOTATION } from '../../src/backend/kubernetes/warm-ties';
import { PolicyHolder } from '../../src/policy/policy-holder';
import { SandboxService, type RunnerLogger } from '../../src/service/sandbox-service';
import { WarmPoolBackend } from '../../src/service/warm-pools';
import { createRestrictedNamespace, runnerKubeConfig, startRunnerK8sServer } from './support';

const NS = 'paddock-sandboxes-runner-warm-restart';
const ORG = 'org-1';
const logged: string[] = [];
const quiet: RunnerLogger = {
  info: () => undefined,
  warn: (m, f) => void logged.push(`${m} ${JSON.stringify(f)}`),
  error: (m, f) => void logged.push(`${m} ${JSON.stringify(f)}`),
};
const identity = {
  runnerId: 'runner-warm-restart',
  organizationId: ORG,
  clusterId: 'c1',
  zone: 'z1',
  runnerGroupId: 'default',
};
const caps = { pidsMax: 256, diskBytes: 1024 ** 3, openFilesMax: 1024 };
const TEMPLATE = {
  containers: [
    { name: 'main', image: 'paddock/base:1', resources: { cpu: '100m', memory: '128Mi' } },
  ],
  maxLifetimeSeconds: 600,
};
const SECRET = 's3cret-value-never-on-a-pod';

interface Runner {
  inner: KubernetesBackend;
  pools: WarmPoolBackend;
  service: SandboxService;
}

/**
 * A runner on Kubernetes has no state dir: a take's tie is kept on the taken pod, so a runner
 * restarted on the same cluster adopts the sandbox under its create's id and reaps only the idle pods.
 */
describe('runner warm pools on Kubernetes across a runner restart (API test server)', () => {
  let server: K8sTestServer;
  const runners: Runner[] = [];
  const pods = (): string[] => server.list('v1', 'Pod', NS).map((p) => p.metadata?.name ?? '');

  const startRunner = (): Runner => {
    const inner = new KubernetesBackend({
      runnerId: identity.runnerId,
      namespace: NS,
      kubeConfig: runnerKubeConfig(server, NS),
      runtimeClasses: [],
    });
    const policy = new PolicyHolder();
    const pools = new WarmPoolBackend({
      inner,
      policy,
      identity,
      caps,
      clock: { now: () => new Date() },
      log: quiet,
    });
    const service = new SandboxService({
      backend: pools,
      identity,
      policy,
      capacity: { cpuMillis: 64_000, memoryBytes: 64 * 1024 ** 3, sandboxes: 500 },
      caps,
      publishState: () => undefined,
      clock: { now: () => new Date() },
      log: quiet,
      warm: pools,
    });
    pools.bindCapacity(() => service.capacity());
    const r = { inner, pools, service };
    runners.push(r);
    return r;
  };
  const waitReady = (r: Runner, n: number): Promise<unknown> =>
    waitFor(() => r.pools.status()[0]?.ready === n && r.pools.memberIds('agents').length === n, {
      timeoutMs: 30_000,
      what: `${n} warm pods ready (${JSON.stringify(r.pools.status())} ${logged.join(' / ')})`,
    });
  const stateOf = (r: Runner, id: string): string | undefined =>
    r.service.list({ organizationId: ORG, showTerminated: true }).find((s) => s.sandboxId === id)
      ?.status.state;

  beforeAll(async () => {
    server = await startRunnerK8sServer({ nodes: [{ name: 'node-1' }] });
    await createRestrictedNamespace(server.kubeConfig(), NS);
  });
  afterAll(async () => {
    const last = runners.at(-1);
    if (last) {
      last.service.close();
      await last.pools.close();
    }
    await server?.close();
  });

  it("adopts a taken warm pod under its create's id with the create's env, labels and deadline; reaps the idle ones and refills", async () => {
    const first = startRunner();
    first.pools.configure([{ name: 'agents', size: 2, template: TEMPLATE }]);
    await waitReady(first, 2);
    await first.service.create({
      sandboxId: 'k8s-adopt',
      organizationId: ORG,
      labels: { team: 'agents' },
      spec: {
        containers: [
          {
            ...TEMPLATE.containers[0],
            environmentVariables: { GREETING: 'kept across the restart' },
          },
        ],
        maxLifetimeSeconds: 120,
      },
    });
    await waitFor(() => stateOf(first, 'k8s-adopt') === 'STATE_RUNNING', {
      timeoutMs: 15_000,
      what: `k8s-adopt RUNNING (${logged.join(' / ')})`,
    });
    const warmId = first.pools.warmIdOf('k8s-adopt') as string;
    expect(warmId).toBeDefined();
    const tie = JSON.parse(
      server.get('v1', 'Pod', podNameFor(warmId), NS)?.metadata?.annotations?.[
        WARM_TAKE_ANNOTATION
      ] ?? '{}',
    ) as { sandboxId?: string; env?: Record<string, string> };
    expect(tie.sandboxId).toBe('k8s-adopt');
    expect(tie.env?.GREETING).toBe('kept across the restart');
    const before = first.service.get({ sandboxId: 'k8s-adopt', organizationId: ORG });
    await waitReady(first, 2);
    const idle = first.pools.memberIds('agents');

    // The runner process goes without stopping anything (a crash, an upgrade); a new one starts on the same cluster.
    first.service.close();
    await first.inner.close();
    const second = startRunner();
    const report = await second.service.recover();
    expect(report.adopted).toEqual(['k8s-adopt']);
    expect(second.pools.warmIdOf('k8s-adopt')).toBe(warmId);
    const got = second.service.get({ sandboxId: 'k8s-adopt', organizationId: ORG });
    expect(got.status.state).toBe('STATE_RUNNING');
    expect(got.labels).toEqual({ team: 'agents' });
    expect(got.status.effectiveMaxLifetimeSeconds).toBe(120);
    expect(got.status.createTime).toEqual(before.status.createTime);
    const r = await second.pools.exec('k8s-adopt', {
      argv: ['sh', '-c', 'echo "$GREETING|$HOSTNAME"'],
    });
    expect(r.stdout.toString()).toBe('kept across the restart|k8s-adopt\n');
    expect(second.service.capacity()).toMatchObject({ sandboxesRunning: 1 });

    // The previous runner's idle pods were nobody's: reaped, and the pool refills with new ones.
    await waitFor(() => idle.every((id) => !pods().includes(podNameFor(id))), {
      timeoutMs: 15_000,
      what: 'the idle warm pods reaped',
    });
    second.pools.configure([{ name: 'agents', size: 2, template: TEMPLATE }]);
    await waitReady(second, 2);
    expect(second.pools.memberIds('agents').some((id) => idle.includes(id))).toBe(false);
    expect(pods()).toContain(podNameFor(warmId));

    second.service.delete({ sandboxId: 'k8s-adopt', organizationId: ORG, gracePeriodSeconds: 0 });
    await waitFor(() => !pods().includes(podNameFor(warmId)), {
      timeoutMs: 15_000,
      what: 'the taken pod deleted',
    });
    await waitFor(
      () =>
        stateOf(second, 'k8s-adopt') === 'STATE_COMPLETED' ||
        stateOf(second, 'k8s-adopt') === 'STATE_FAILED',
      { timeoutMs: 15_000 },
    );
  }, 90_000);

  it("keeps a take's secret values in a Secret owned by the pod, never in its annotations, and reads them back", async () => {
    const r = runners.at(-1) as Runner;
    const warmId = r.pools.memberIds('agents')[0] as string;
    const name = podNameFor(warmId);
    const now = new Date();
    await r.inner.warmTies.put(
      {
        v: 1,
        warmId,
        warmDeadline: now.toISOString(),
        sandboxId: 'k8s-secret',
        env: { PLAIN: 'visible', TOKEN: SECRET, HOSTNAME: 'k8s-secret' },
        labels: { team: 'agents' },
        takenAt: now.toISOString(),
        deadline: new Date(now.getTime() + 60_000).toISOString(),
      },
      ['TOKEN'],
    );
    const pod = server.get('v1', 'Pod', name, NS);
    const annotations = JSON.stringify(pod?.metadata?.annotations ?? {});
    expect(annotations).toContain('k8s-secret');
    expect(annotations).toContain('visible');
    expect(annotations).not.toContain(SECRET);
    expect(annotations).not.toContain(Buffer.from(SECRET).toString('base64'));
    const secret = server.get('v1', 'Secret', takeEnvSecretNameFor(name), NS) as
      | { data?: Record<string, string>; metadata?: { ownerReferences?: { uid?: string }[] } }
      | undefined;
    expect(Buffer.from(secret?.data?.TOKEN ?? '', 'base64').toString()).toBe(SECRET);
    expect(secret?.metadata?.ownerReferences?.map((o) => o.uid)).toEqual([pod?.metadata?.uid]);

    const loaded = (await r.inner.warmTies.loadAll()).find((t) => t.warmId === warmId);
    expect(loaded?.sandboxId).toBe('k8s-secret');
    expect(loaded?.env).toEqual({ PLAIN: 'visible', TOKEN: SECRET, HOSTNAME: 'k8s-secret' });
    expect(loaded?.unrecoverable).toBeUndefined();

    // A tie whose secret values are gone cannot serve its create as asked: recovery reaps it.
    await server
      .kubeConfig()
      .makeApiClient(k8s.CoreV1Api)
      .deleteNamespacedSecret({ namespace: NS, name: takeEnvSecretNameFor(name) });
    const orphaned = (await r.inner.warmTies.loadAll()).find((t) => t.warmId === warmId);
    expect(orphaned?.sandboxId).toBe('k8s-secret');
    expect(orphaned?.unrecoverable).toContain('TOKEN');
    expect(orphaned?.env.TOKEN).toBeUndefined();
    await r.inner.stop(warmId, 0, 'STOPPED_BY_USER');
  }, 30_000);

  it("keeps a take's secret env vars out of its tie's annotation on the take path, in the take's Secret", async () => {
    const r = runners.at(-1) as Runner;
    // Secret env vars are matched like every launch field, so only a create delivering the very
    // value its template states (in its spec, so this value is no secret here) takes a pod: enough
    // to check that the take path names them to the store, which keeps them off the tie.
    const VALUE = 'stated-by-the-template';
    const container = {
      ...TEMPLATE.containers[0],
      environmentVariables: { TOKEN: VALUE },
      secretStores: [{ storeName: 'vault', secrets: [{ path: 'token', envVar: 'TOKEN' }] }],
    };
    const vault = { containers: [container], maxLifetimeSeconds: 600 };
    r.pools.configure([
      { name: 'agents', size: 2, template: TEMPLATE },
      { name: 'vault', size: 1, template: vault },
    ]);
    await waitFor(() => r.pools.status()[1]?.ready === 1, {
      timeoutMs: 30_000,
      what: `the vault pool ready (${JSON.stringify(r.pools.status())} ${logged.join(' / ')})`,
    });
    await r.service.create({
      sandboxId: 'k8s-vault',
      organizationId: ORG,
      spec: vault,
      secretEnv: [{ index: 0, env: { TOKEN: VALUE } }],
    });
    await waitFor(() => stateOf(r, 'k8s-vault') === 'STATE_RUNNING', {
      timeoutMs: 15_000,
      what: `k8s-vault RUNNING (${logged.join(' / ')})`,
    });
    const warmId = r.pools.warmIdOf('k8s-vault') as string;
    expect(warmId).toBeDefined();
    const name = podNameFor(warmId);
    const tie = JSON.parse(
      server.get('v1', 'Pod', name, NS)?.metadata?.annotations?.[WARM_TAKE_ANNOTATION] ?? '{}',
    ) as { sandboxId?: string; env?: Record<string, string>; secretEnv?: string[] };
    expect(tie.sandboxId).toBe('k8s-vault');
    expect(tie.env).toEqual({ HOSTNAME: 'k8s-vault' });
    expect(tie.secretEnv).toEqual(['TOKEN']);
    const secret = server.get('v1', 'Secret', takeEnvSecretNameFor(name), NS) as
      { data?: Record<string, string> } | undefined;
    expect(Buffer.from(secret?.data?.TOKEN ?? '', 'base64').toString()).toBe(VALUE);
    expect((await r.inner.warmTies.loadAll()).find((t) => t.warmId === warmId)?.env.TOKEN).toBe(
      VALUE,
    );

    r.service.delete({ sandboxId: 'k8s-vault', organizationId: ORG, gracePeriodSeconds: 0 });
    await waitFor(
      () =>
        !pods().includes(name) &&
        server.get('v1', 'Secret', takeEnvSecretNameFor(name), NS) === undefined,
      { timeoutMs: 15_000, what: 'the taken pod and its take Secret deleted' },
    );
  }, 60_000);
});

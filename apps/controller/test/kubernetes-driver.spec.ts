import { startK8sTestServer, type K8sTestServer } from '@paddock/k8s-testserver';
import { FIELD_MANAGER } from '../src/builders/names';
import type { DesiredRunner } from '../src/desired';
import { KubernetesDriver } from '../src/drivers/kubernetes.driver';
import { NotLeaderError } from '../src/drivers/fenced-connection';
import { CONTROLLER_USER, controllerKubeConfig } from './support/controller-rbac';

const desired: DesiredRunner = {
  uid: '6f1c0c4e-0000-4000-8000-0000000000f1',
  organizationId: 'org-1',
  runnerId: 'fenced',
  clusterId: 'c-1',
  zone: 'z',
  runnerGroupId: 'default',
  deleting: false,
  targetRevision: 1,
  targetImage: 'paddock/runner:0.1.0',
  policy: null,
  policyEtag: 'p1',
  deploymentSpec: {
    image: 'paddock/runner:0.1.0',
    imagePullPolicy: 'IfNotPresent',
    gatewayServer: 'nats://nats:4222',
    serviceAccount: 'runner',
    resources: {},
    initResources: { cpuRequest: '50m', memoryRequest: '64Mi' },
    scaling: { replicas: 1 },
    tolerations: [],
    nodeSelector: {},
    labels: {},
    annotations: {},
    env: {},
    args: [],
    cpuRuntimeClass: '',
    gpuRuntimeClass: '',
  },
};

/** Fencing of the Kubernetes driver: a deposed leader's requests never leave the process. */
describe('KubernetesDriver fencing', () => {
  let k8s: K8sTestServer;
  beforeAll(async () => {
    k8s = await startK8sTestServer({ nodes: [{ name: 'node-1' }], users: { [CONTROLLER_USER]: 'controller-token' } });
  });
  afterAll(async () => {
    await k8s?.close();
  });

  it('refuses every write while mayWrite() is false, still reads, and writes again once it is true', async () => {
    let leader = false;
    const driver = new KubernetesDriver(controllerKubeConfig(k8s), { natsUrl: 'nats://n', clusterId: 'c-1', mayWrite: () => leader });
    const writes0 = k8s.writeCount(FIELD_MANAGER);
    await expect(driver.apply(desired)).rejects.toBeInstanceOf(NotLeaderError);
    await expect(driver.teardown(desired.runnerId, desired.uid)).rejects.toBeInstanceOf(NotLeaderError);
    expect(k8s.writeCount(FIELD_MANAGER)).toBe(writes0);
    expect(k8s.list('v1', 'Namespace').map((n) => n.metadata?.name)).not.toContain('paddock-runner-fenced');
    // Reads are not fenced: a follower may observe.
    expect((await driver.observe(desired)).installStatus).toBe('RUNNER_INSTALL_STATUS_PROVISIONING');
    expect(await driver.listDeployed()).toEqual([]);

    leader = true;
    await driver.apply(desired);
    expect(k8s.get('apps/v1', 'Deployment', 'runner-fenced', 'paddock-runner-fenced')).toBeDefined();
    expect(k8s.writeCount(FIELD_MANAGER)).toBeGreaterThan(writes0);
  });

  it('the fence is checked when the request leaves, not only when apply() starts', async () => {
    // Still the leader when apply() checks before patch(), deposed by the time the request leaves
    // (a pause in between): the request is refused, nothing reaches the server.
    let allowed = 1;
    const driver = new KubernetesDriver(controllerKubeConfig(k8s), { natsUrl: 'nats://n', clusterId: 'c-1', mayWrite: () => allowed-- > 0 });
    const other = { ...desired, runnerId: 'fenced-late', uid: '6f1c0c4e-0000-4000-8000-0000000000f2' };
    const writes0 = k8s.writeCount(FIELD_MANAGER);
    await expect(driver.apply(other)).rejects.toBeInstanceOf(NotLeaderError);
    expect(k8s.writeCount(FIELD_MANAGER)).toBe(writes0);
    expect(k8s.get('apps/v1', 'Deployment', 'runner-fenced-late', 'paddock-runner-fenced-late')).toBeUndefined();
  });

  it('and once more when its bytes reach the socket: a leader deposed after the request was built sends nothing', async () => {
    // Leader for apply()'s own check and for the request middleware, deposed before the
    // connection writes (a freeze during the TCP connect): the socket gate refuses.
    let allowed = 2;
    const driver = new KubernetesDriver(controllerKubeConfig(k8s), { natsUrl: 'nats://n', clusterId: 'c-1', mayWrite: () => allowed-- > 0 });
    const other = { ...desired, runnerId: 'fenced-socket', uid: '6f1c0c4e-0000-4000-8000-0000000000f3' };
    const writes0 = k8s.writeCount(FIELD_MANAGER);
    await expect(driver.apply(other)).rejects.toThrow(/not the leader any more/);
    expect(allowed).toBeLessThan(0);
    expect(k8s.writeCount(FIELD_MANAGER)).toBe(writes0);
    expect(k8s.list('v1', 'Namespace').map((n) => n.metadata?.name)).not.toContain('paddock-runner-fenced-socket');
  });
});

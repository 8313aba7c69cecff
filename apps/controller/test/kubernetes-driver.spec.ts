import { CoreV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { startK8sTestServer, type K8sTestServer } from '@paddock/k8s-testserver';
import { FIELD_MANAGER } from '../src/builders/names';
import { KubernetesDriver } from '../src/drivers/kubernetes.driver';
import { NotLeaderError } from '../src/drivers/fenced-connection';
import { CONTROLLER_USER, controllerKubeConfig } from './support/controller-rbac';
import { minimalRunner } from './support/minimal-runner';

const desired = minimalRunner('fenced', '6f1c0c4e-0000-4000-8000-0000000000f1');

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

/** An upgrade from the releases that granted the sandbox namespace through a Role of their own. */
describe('KubernetesDriver: the legacy runner Role', () => {
  let k8s: K8sTestServer;
  beforeAll(async () => {
    k8s = await startK8sTestServer({ nodes: [{ name: 'node-1' }], users: { [CONTROLLER_USER]: 'controller-token' } });
  });
  afterAll(async () => {
    await k8s?.close();
  });

  it('goes, with its binding, once the binding of the installed ClusterRole is applied', async () => {
    const d = { ...desired, runnerId: 'upgraded', uid: '6f1c0c4e-0000-4000-8000-0000000000f4' };
    const ns = 'paddock-sandboxes-upgraded';
    // What an earlier release left, written by the server's own user (the controller may not write Roles now).
    const rbac = k8s.kubeConfig().makeApiClient(RbacAuthorizationV1Api);
    await k8s.kubeConfig().makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: ns } } });
    await rbac.createNamespacedRole({ namespace: ns, body: { metadata: { name: 'runner-upgraded' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] } });
    await rbac.createNamespacedRoleBinding({
      namespace: ns,
      body: { metadata: { name: 'runner-upgraded' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'runner-upgraded' }, subjects: [{ kind: 'ServiceAccount', name: 'runner-upgraded', namespace: 'paddock-runner-upgraded' }] },
    });
    const driver = new KubernetesDriver(controllerKubeConfig(k8s), { natsUrl: 'nats://n', clusterId: 'c-1' });
    await driver.apply(d);
    expect(k8s.get('rbac.authorization.k8s.io/v1', 'Role', 'runner-upgraded', ns)).toBeUndefined();
    expect(k8s.get('rbac.authorization.k8s.io/v1', 'RoleBinding', 'runner-upgraded', ns)).toBeUndefined();
    expect(k8s.get('rbac.authorization.k8s.io/v1', 'RoleBinding', 'runner-upgraded-sandboxes', ns)).toBeDefined();
    // And a second apply, with nothing left to remove, is as good.
    await driver.apply(d);
    expect(k8s.get('rbac.authorization.k8s.io/v1', 'RoleBinding', 'runner-upgraded-sandboxes', ns)).toBeDefined();
  });
});

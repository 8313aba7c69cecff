import * as k8s from '@kubernetes/client-node';
import { waitFor } from '@paddock/testing';
import { startK8sTestServer, type K8sTestServer } from '../src';
import { statusOf } from './support';

let server: K8sTestServer;
let core: k8s.CoreV1Api;
let apps: k8s.AppsV1Api;

beforeAll(async () => {
  server = await startK8sTestServer({
    nodes: [
      { name: 'cpu-1', labels: { pool: 'cpu' } },
      { name: 'cpu-2', labels: { pool: 'cpu' } },
      { name: 'gpu-1', labels: { pool: 'gpu' }, taints: [{ key: 'workload', value: 'gpu', effect: 'NoSchedule' }] },
    ],
  });
  const kc = server.kubeConfig();
  core = kc.makeApiClient(k8s.CoreV1Api);
  apps = kc.makeApiClient(k8s.AppsV1Api);
  await core.createNamespace({ body: { metadata: { name: 'apps' } } });
});
afterAll(async () => {
  await server.close();
});

const deploymentBody = (name: string, image: string, replicas: number, podSpec: Partial<k8s.V1PodSpec> = {}): k8s.V1Deployment => ({
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image }], ...podSpec } },
  },
});

const condition = (d: k8s.V1Deployment | undefined, type: string): k8s.V1DeploymentCondition | undefined => d?.status?.conditions?.find((c) => c.type === type);

async function availableAtTarget(name: string): Promise<k8s.V1Deployment | undefined> {
  const d = await apps.readNamespacedDeployment({ namespace: 'apps', name });
  const ok =
    d.status?.observedGeneration === d.metadata?.generation &&
    d.status?.updatedReplicas === d.spec?.replicas &&
    d.status?.availableReplicas === d.spec?.replicas &&
    d.status?.replicas === d.spec?.replicas &&
    condition(d, 'Available')?.status === 'True' &&
    condition(d, 'Progressing')?.reason === 'NewReplicaSetAvailable';
  return ok ? d : undefined;
}

describe('deployments', () => {
  it('creates a ReplicaSet and pods, reports Available, and rolls out a new ReplicaSet on an image change', async () => {
    await apps.createNamespacedDeployment({ namespace: 'apps', body: deploymentBody('web', 'nginx:1.27', 3) });
    const d1 = await waitFor(() => availableAtTarget('web'), { what: 'web available', timeoutMs: 20_000 });
    expect(condition(d1, 'Available')).toMatchObject({ status: 'True', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.' });
    expect(d1.metadata?.annotations?.['deployment.kubernetes.io/revision']).toBe('1');
    const rs1 = (await apps.listNamespacedReplicaSet({ namespace: 'apps', labelSelector: 'app=web' })).items;
    expect(rs1).toHaveLength(1);
    const hash1 = rs1[0]?.metadata?.labels?.['pod-template-hash'] ?? '';
    expect(rs1[0]?.metadata?.name).toBe(`web-${hash1}`);
    const pods1 = (await core.listNamespacedPod({ namespace: 'apps', labelSelector: `app=web,pod-template-hash=${hash1}` })).items;
    expect(pods1).toHaveLength(3);
    expect(pods1.every((p) => p.status?.phase === 'Running' && p.metadata?.ownerReferences?.[0]?.kind === 'ReplicaSet')).toBe(true);
    expect(new Set(pods1.map((p) => p.spec?.nodeName))).toEqual(new Set(['cpu-1', 'cpu-2']));

    await apps.patchNamespacedDeployment(
      { namespace: 'apps', name: 'web', body: { spec: { template: { spec: { containers: [{ name: 'main', image: 'nginx:1.28' }] } } } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch),
    );
    const d2 = await waitFor(async () => {
      const d = await availableAtTarget('web');
      return d && d.metadata?.generation === 2 ? d : undefined;
    }, { what: 'rollout to nginx:1.28', timeoutMs: 20_000 });
    expect(d2.metadata?.annotations?.['deployment.kubernetes.io/revision']).toBe('2');
    await waitFor(async () => (await core.listNamespacedPod({ namespace: 'apps', labelSelector: `pod-template-hash=${hash1}` })).items.length === 0, { what: 'old pods gone' });
    const rs = (await apps.listNamespacedReplicaSet({ namespace: 'apps', labelSelector: 'app=web' })).items;
    expect(rs.map((r) => r.spec?.replicas).sort()).toEqual([0, 3]);
    const pods = (await core.listNamespacedPod({ namespace: 'apps', labelSelector: 'app=web' })).items;
    expect(pods.map((p) => p.spec?.containers[0]?.image)).toEqual(['nginx:1.28', 'nginx:1.28', 'nginx:1.28']);
  });

  it('deleting a Deployment garbage-collects its ReplicaSets and pods', async () => {
    await apps.createNamespacedDeployment({ namespace: 'apps', body: deploymentBody('short', 'nginx:1', 2) });
    await waitFor(() => availableAtTarget('short'), { what: 'short available', timeoutMs: 20_000 });
    await apps.deleteNamespacedDeployment({ namespace: 'apps', name: 'short' });
    await waitFor(async () => (await core.listNamespacedPod({ namespace: 'apps', labelSelector: 'app=short' })).items.length === 0, { what: 'pods collected', timeoutMs: 20_000 });
    expect((await apps.listNamespacedReplicaSet({ namespace: 'apps', labelSelector: 'app=short' })).items).toEqual([]);
  });

  it('leaves a pod for a tainted pool Unschedulable naming the taint, and schedules it once tolerated', async () => {
    await apps.createNamespacedDeployment({ namespace: 'apps', body: deploymentBody('gpu', 'cuda:12', 1, { nodeSelector: { pool: 'gpu' } }) });
    const pending = await waitFor(async () => {
      const pods = (await core.listNamespacedPod({ namespace: 'apps', labelSelector: 'app=gpu' })).items;
      return pods[0]?.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
    }, { what: 'PodScheduled=False' });
    expect(pending.reason).toBe('Unschedulable');
    expect(pending.message).toBe(
      "0/3 nodes are available: 1 node(s) had untolerated taint {workload: gpu}, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
    );
    const taint = /untolerated taint \{([^:]+): ([^}]*)\}/.exec(pending.message ?? '');
    expect(taint && `Add toleration for taint '${taint[1] ?? ''}=${taint[2] ?? ''}:NoSchedule'`).toBe("Add toleration for taint 'workload=gpu:NoSchedule'");
    const events = (await core.listNamespacedEvent({ namespace: 'apps', fieldSelector: 'reason=FailedScheduling' })).items;
    expect(events.length).toBeGreaterThan(0);

    await apps.patchNamespacedDeployment(
      { namespace: 'apps', name: 'gpu', body: { spec: { template: { spec: { tolerations: [{ key: 'workload', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] } } } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    const d = await waitFor(async () => {
      const x = await availableAtTarget('gpu');
      return x && x.metadata?.generation === 2 ? x : undefined;
    }, { what: 'gpu deployment available', timeoutMs: 20_000 });
    expect(d.status?.availableReplicas).toBe(1);
    const pods = (await core.listNamespacedPod({ namespace: 'apps', labelSelector: 'app=gpu' })).items.filter((p) => !p.metadata?.deletionTimestamp);
    expect(pods.map((p) => p.spec?.nodeName)).toEqual(['gpu-1']);
  });

  it('compares Gt/Lt node affinity requirements as integers, and never matches a node without the label', async () => {
    server.addNode({ name: 'mem-small', labels: { 'example.com/gpu-mib': '40960' } });
    server.addNode({ name: 'mem-large', labels: { 'example.com/gpu-mib': '81920' } });
    const affinity = (operator: string, value: string): k8s.V1Affinity => ({
      nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'example.com/gpu-mib', operator, values: [value] }] }] } },
    });
    await core.createNamespacedPod({ namespace: 'apps', body: { metadata: { name: 'big-gpu' }, spec: { containers: [{ name: 'c', image: 'x' }], affinity: affinity('Gt', '81919') } } });
    await core.createNamespacedPod({ namespace: 'apps', body: { metadata: { name: 'small-gpu' }, spec: { containers: [{ name: 'c', image: 'x' }], affinity: affinity('Lt', '50000') } } });
    await core.createNamespacedPod({ namespace: 'apps', body: { metadata: { name: 'huge-gpu' }, spec: { containers: [{ name: 'c', image: 'x' }], affinity: affinity('Gt', '81920') } } });
    await waitFor(async () => (await core.readNamespacedPod({ namespace: 'apps', name: 'big-gpu' })).spec?.nodeName === 'mem-large', { what: 'big-gpu on mem-large' });
    await waitFor(async () => (await core.readNamespacedPod({ namespace: 'apps', name: 'small-gpu' })).spec?.nodeName === 'mem-small', { what: 'small-gpu on mem-small' });
    const huge = await waitFor(async () => (await core.readNamespacedPod({ namespace: 'apps', name: 'huge-gpu' })).status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False'), { what: 'huge-gpu unschedulable' });
    expect(huge.reason).toBe('Unschedulable');
    for (const name of ['big-gpu', 'small-gpu', 'huge-gpu']) await core.deleteNamespacedPod({ namespace: 'apps', name, gracePeriodSeconds: 0 });
    for (const name of ['mem-small', 'mem-large']) await core.deleteNode({ name });
  });

  it('reports unschedulable and cordoned nodes, and schedules when a node is added', async () => {
    server.taintNode('cpu-1', { key: 'maintenance', value: 'true', effect: 'NoSchedule' });
    await core.patchNode({ name: 'cpu-2', body: { spec: { unschedulable: true } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    await core.createNamespacedPod({ namespace: 'apps', body: { metadata: { name: 'waiter' }, spec: { containers: [{ name: 'c', image: 'x' }], nodeSelector: { pool: 'cpu' } } } });
    const cond = await waitFor(async () => (await core.readNamespacedPod({ namespace: 'apps', name: 'waiter' })).status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False'), { what: 'unschedulable' });
    // One reason per node: the first failing filter in the default order (unschedulable, taints, affinity).
    expect(cond.message).toMatch(/^0\/3 nodes are available: 1 node\(s\) had untolerated taint \{maintenance: true\}, 1 node\(s\) had untolerated taint \{workload: gpu\}, 1 node\(s\) were unschedulable\. preemption: /);
    server.addNode({ name: 'cpu-3', labels: { pool: 'cpu' } });
    await waitFor(async () => (await core.readNamespacedPod({ namespace: 'apps', name: 'waiter' })).spec?.nodeName === 'cpu-3', { what: 'scheduled on the new node' });
    server.untaintNode('cpu-1', 'maintenance');
    await core.patchNode({ name: 'cpu-2', body: { spec: { unschedulable: null } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
  });
});

describe('pod failure modes', () => {
  it('reports ErrImagePull then ImagePullBackOff for a missing image, and CrashLoopBackOff for a crashing one', async () => {
    await core.createNamespacedPod({ namespace: 'apps', body: { metadata: { name: 'pull' }, spec: { containers: [{ name: 'c', image: 'registry.example/doesnotexist:1' }] } } });
    await core.createNamespacedPod({ namespace: 'apps', body: { metadata: { name: 'crash' }, spec: { containers: [{ name: 'c', image: 'example/crashloop:1' }] } } });
    const waiting = async (name: string): Promise<string | undefined> => (await core.readNamespacedPod({ namespace: 'apps', name })).status?.containerStatuses?.[0]?.state?.waiting?.reason;
    await waitFor(async () => (await waiting('pull')) === 'ImagePullBackOff', { what: 'ImagePullBackOff' });
    const pull = await core.readNamespacedPod({ namespace: 'apps', name: 'pull' });
    expect(pull.status?.phase).toBe('Pending');
    expect(pull.status?.containerStatuses?.[0]?.state?.waiting?.message).toBe('Back-off pulling image "registry.example/doesnotexist:1"');
    const crash = await waitFor(async () => {
      const p = await core.readNamespacedPod({ namespace: 'apps', name: 'crash' });
      const s = p.status?.containerStatuses?.[0];
      return s?.state?.waiting?.reason === 'CrashLoopBackOff' && (s.restartCount ?? 0) >= 2 ? p : undefined;
    }, { what: 'CrashLoopBackOff' });
    expect(crash.status?.phase).toBe('Running');
    expect(crash.status?.containerStatuses?.[0]?.lastState?.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
  });

  it('rejects a pod naming a RuntimeClass that does not exist, and merges the scheduling of one that does', async () => {
    const missing = await statusOf(core.createNamespacedPod({ namespace: 'apps', body: { metadata: { name: 'rc' }, spec: { runtimeClassName: 'gvisor', containers: [{ name: 'c', image: 'x' }] } } }));
    expect(missing).toMatchObject({ code: 403, reason: 'Forbidden', message: 'pods "rc" is forbidden: pod rejected: RuntimeClass "gvisor" not found' });
    const node = server.kubeConfig().makeApiClient(k8s.NodeV1Api);
    await node.createRuntimeClass({ body: { metadata: { name: 'gvisor' }, handler: 'runsc', scheduling: { nodeSelector: { pool: 'gpu' }, tolerations: [{ key: 'workload', operator: 'Exists', effect: 'NoSchedule' }] } } });
    const pod = await core.createNamespacedPod({ namespace: 'apps', body: { metadata: { name: 'rc' }, spec: { runtimeClassName: 'gvisor', containers: [{ name: 'c', image: 'x' }] } } });
    expect(pod.spec?.nodeSelector).toEqual({ pool: 'gpu' });
    await waitFor(async () => (await core.readNamespacedPod({ namespace: 'apps', name: 'rc' })).spec?.nodeName === 'gpu-1', { what: 'runtime-class pod on gpu-1' });
  });

  it('answers 403 exceeded quota when a pod would pass a ResourceQuota', async () => {
    await core.createNamespace({ body: { metadata: { name: 'quota' } } });
    await core.createNamespacedResourceQuota({ namespace: 'quota', body: { metadata: { name: 'q' }, spec: { hard: { pods: '2', 'requests.cpu': '1' } } } });
    const pod = (name: string, cpu: string): k8s.V1Pod => ({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu } } }] } });
    await core.createNamespacedPod({ namespace: 'quota', body: pod('a', '500m') });
    const overCpu = await statusOf(core.createNamespacedPod({ namespace: 'quota', body: pod('b', '600m') }));
    expect(overCpu).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      message: 'pods "b" is forbidden: exceeded quota: q, requested: requests.cpu=600m, used: requests.cpu=500m, limited: requests.cpu=1',
    });
    const noRequests = await statusOf(core.createNamespacedPod({ namespace: 'quota', body: { metadata: { name: 'c' }, spec: { containers: [{ name: 'c', image: 'x' }] } } }));
    expect(noRequests.message).toBe('pods "c" is forbidden: failed quota: q: must specify requests.cpu');
    await core.createNamespacedPod({ namespace: 'quota', body: pod('d', '100m') });
    expect((await statusOf(core.createNamespacedPod({ namespace: 'quota', body: pod('e', '100m') }))).message).toBe(
      'pods "e" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2',
    );
    await waitFor(async () => (await core.readNamespacedResourceQuota({ namespace: 'quota', name: 'q' })).status?.used?.pods === '2', { what: 'quota status' });
  });
});

import * as k8s from '@kubernetes/client-node';
import { waitFor } from '@paddock/testing';
import { startK8sTestServer, type K8sTestServer } from '../src';
import { statusOf } from './support';

let server: K8sTestServer;
let core: k8s.CoreV1Api;
let coordination: k8s.CoordinationV1Api;
let objects: k8s.KubernetesObjectApi;

beforeAll(async () => {
  server = await startK8sTestServer({ kubelet: { enabled: false }, scheduler: false });
  const kc = server.kubeConfig();
  core = kc.makeApiClient(k8s.CoreV1Api);
  coordination = kc.makeApiClient(k8s.CoordinationV1Api);
  objects = k8s.KubernetesObjectApi.makeApiClient(kc);
  await core.createNamespace({ body: { metadata: { name: 'crud' } } });
});
afterAll(async () => {
  await server.close();
});

const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
const strategic = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch);

describe('REST', () => {
  it('creates, reads, replaces and deletes, with a 409 Conflict for a stale resourceVersion', async () => {
    const created = await core.createNamespacedConfigMap({ namespace: 'crud', body: { metadata: { name: 'cm1' }, data: { a: '1' } } });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    const rv1 = created.metadata?.resourceVersion ?? '';
    const replaced = await core.replaceNamespacedConfigMap({ namespace: 'crud', name: 'cm1', body: { ...created, data: { a: '2' } } });
    expect(Number(replaced.metadata?.resourceVersion)).toBeGreaterThan(Number(rv1));

    const stale = await statusOf(core.replaceNamespacedConfigMap({ namespace: 'crud', name: 'cm1', body: { ...created, data: { a: '3' } } }));
    expect(stale).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      code: 409,
      reason: 'Conflict',
      message: 'Operation cannot be fulfilled on configmaps "cm1": the object has been modified; please apply your changes to the latest version and try again',
      details: { name: 'cm1', kind: 'configmaps' },
    });
    expect((await core.readNamespacedConfigMap({ namespace: 'crud', name: 'cm1' })).data).toEqual({ a: '2' });

    await core.deleteNamespacedConfigMap({ namespace: 'crud', name: 'cm1' });
    const gone = await statusOf(core.readNamespacedConfigMap({ namespace: 'crud', name: 'cm1' }));
    expect(gone).toMatchObject({ code: 404, reason: 'NotFound', message: 'configmaps "cm1" not found' });
  });

  it('lets exactly one of ten concurrent writers win an update from the same resourceVersion', async () => {
    const base = await core.createNamespacedConfigMap({ namespace: 'crud', body: { metadata: { name: 'race' }, data: { n: '0' } } });
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => core.replaceNamespacedConfigMap({ namespace: 'crud', name: 'race', body: { ...base, data: { n: String(i + 1) } } })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const codes = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => (r.reason as k8s.ApiException<string>).code);
    expect(codes).toEqual(Array.from({ length: 9 }, () => 409));
  });

  it('answers AlreadyExists, Invalid (with causes) and generateName like the API server', async () => {
    await core.createNamespacedSecret({ namespace: 'crud', body: { metadata: { name: 's1' }, stringData: { token: 'abc' } } });
    const secret = await core.readNamespacedSecret({ namespace: 'crud', name: 's1' });
    expect(secret.data).toEqual({ token: Buffer.from('abc').toString('base64') });
    expect(await statusOf(core.createNamespacedSecret({ namespace: 'crud', body: { metadata: { name: 's1' } } }))).toMatchObject({
      code: 409,
      reason: 'AlreadyExists',
      message: 'secrets "s1" already exists',
    });

    const bad = await statusOf(core.createNamespacedConfigMap({ namespace: 'crud', body: { metadata: { name: 'Bad_Name' } } }));
    expect(bad.code).toBe(422);
    expect(bad.reason).toBe('Invalid');
    expect(bad.message).toMatch(/^ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/);
    expect(bad.details?.causes?.[0]).toMatchObject({ reason: 'FieldValueInvalid', field: 'metadata.name' });

    const apps = server.kubeConfig().makeApiClient(k8s.AppsV1Api);
    const noSelector = await statusOf(
      apps.createNamespacedDeployment({ namespace: 'crud', body: { metadata: { name: 'd' }, spec: { template: { spec: { containers: [{ name: 'c', image: 'x' }] } } } as never } }),
    );
    expect(noSelector).toMatchObject({ code: 422, reason: 'Invalid', details: { causes: [{ reason: 'FieldValueRequired', field: 'spec.selector', message: 'Required value' }] } });
    expect(noSelector.message).toBe('Deployment.apps "d" is invalid: spec.selector: Required value');

    const generated = await core.createNamespacedConfigMap({ namespace: 'crud', body: { metadata: { generateName: 'gen-' } } });
    expect(generated.metadata?.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);

    expect(await statusOf(core.createNamespacedConfigMap({ namespace: 'nope', body: { metadata: { name: 'x' } } }))).toMatchObject({
      code: 404,
      message: 'namespaces "nope" not found',
    });
  });

  it('patches with merge, strategic merge and JSON patch; a patch carrying a stale resourceVersion conflicts', async () => {
    await core.createNamespacedConfigMap({ namespace: 'crud', body: { metadata: { name: 'p1', labels: { a: '1', b: '2' } }, data: { k: 'v' } } });
    const merged = await core.patchNamespacedConfigMap({ namespace: 'crud', name: 'p1', body: { metadata: { labels: { b: null, c: '3' } } } }, merge);
    expect(merged.metadata?.labels).toEqual({ a: '1', c: '3' });
    const jsonPatched = await core.patchNamespacedConfigMap({ namespace: 'crud', name: 'p1', body: [{ op: 'replace', path: '/data/k', value: 'w' }, { op: 'add', path: '/data/n', value: '1' }] });
    expect(jsonPatched.data).toEqual({ k: 'w', n: '1' });
    const failedTest = await statusOf(core.patchNamespacedConfigMap({ namespace: 'crud', name: 'p1', body: [{ op: 'test', path: '/data/k', value: 'nope' }] }));
    expect(failedTest.code).toBe(422);
    const stale = await statusOf(core.patchNamespacedConfigMap({ namespace: 'crud', name: 'p1', body: { metadata: { resourceVersion: '1' }, data: { k: 'x' } } }, merge));
    expect(stale).toMatchObject({ code: 409, reason: 'Conflict' });

    await core.createNamespacedPod({
      namespace: 'crud',
      body: { metadata: { name: 'smp' }, spec: { containers: [{ name: 'a', image: 'img:1' }, { name: 'b', image: 'img:1' }] } },
    });
    const pod = await core.patchNamespacedPod({ namespace: 'crud', name: 'smp', body: { spec: { containers: [{ name: 'b', image: 'img:2' }] } } }, strategic);
    expect(pod.spec?.containers.map((c) => `${c.name}=${c.image ?? ''}`)).toEqual(['a=img:1', 'b=img:2']);
    const forbidden = await statusOf(core.patchNamespacedPod({ namespace: 'crud', name: 'smp', body: { spec: { restartPolicy: 'Never' } } }, strategic));
    expect(forbidden.code).toBe(422);
    expect(forbidden.message).toContain('pod updates may not change fields other than');
  });

  it('lists with label and field selectors, and pages with limit/continue', async () => {
    for (const [name, tier] of [['l1', 'web'], ['l2', 'web'], ['l3', 'db']] as const) {
      await core.createNamespacedConfigMap({ namespace: 'crud', body: { metadata: { name, labels: { tier, sel: 'yes' } } } });
    }
    const web = await core.listNamespacedConfigMap({ namespace: 'crud', labelSelector: 'sel=yes,tier in (web)' });
    expect(web.items.map((i) => i.metadata?.name)).toEqual(['l1', 'l2']);
    const notWeb = await core.listNamespacedConfigMap({ namespace: 'crud', labelSelector: 'sel,tier!=web' });
    expect(notWeb.items.map((i) => i.metadata?.name)).toEqual(['l3']);
    const byName = await core.listNamespacedConfigMap({ namespace: 'crud', fieldSelector: 'metadata.name=l2' });
    expect(byName.items.map((i) => i.metadata?.name)).toEqual(['l2']);
    const page1 = await core.listNamespacedConfigMap({ namespace: 'crud', labelSelector: 'sel=yes', limit: 2 });
    expect(page1.items).toHaveLength(2);
    expect(page1.metadata?.remainingItemCount).toBe(1);
    const page2 = await core.listNamespacedConfigMap({ namespace: 'crud', labelSelector: 'sel=yes', limit: 2, _continue: page1.metadata?._continue ?? '' });
    expect(page2.items.map((i) => i.metadata?.name)).toEqual(['l3']);
    expect(Number(page1.metadata?.resourceVersion)).toBeGreaterThan(0);
  });

  it('serves discovery so KubernetesObjectApi resolves every kind it is asked for', async () => {
    const kinds: [string, string, string | undefined][] = [
      ['rbac.authorization.k8s.io/v1', 'ClusterRole', undefined],
      ['rbac.authorization.k8s.io/v1', 'Role', 'crud'],
      ['networking.k8s.io/v1', 'NetworkPolicy', 'crud'],
      ['coordination.k8s.io/v1', 'Lease', 'crud'],
      ['node.k8s.io/v1', 'RuntimeClass', undefined],
    ];
    for (const [apiVersion, kind, namespace] of kinds) {
      const list = await objects.list(apiVersion, kind, namespace);
      expect(list.items).toEqual([]);
    }
    const role = await objects.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'reader', namespace: 'crud' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
    } as k8s.KubernetesObject);
    expect(role.metadata?.uid).toBeDefined();
    expect(server.get('rbac.authorization.k8s.io/v1', 'Role', 'reader', 'crud')).toBeDefined();
  });

  it('keeps an object with finalizers until the last finalizer is removed', async () => {
    await core.createNamespacedConfigMap({ namespace: 'crud', body: { metadata: { name: 'fin', finalizers: ['example.com/a', 'example.com/b'] } } });
    const pending = await core.deleteNamespacedConfigMap({ namespace: 'crud', name: 'fin' });
    expect(pending).toBeDefined();
    const held = await core.readNamespacedConfigMap({ namespace: 'crud', name: 'fin' });
    expect(held.metadata?.deletionTimestamp).toBeDefined();
    await core.patchNamespacedConfigMap({ namespace: 'crud', name: 'fin', body: [{ op: 'remove', path: '/metadata/finalizers/0' }] });
    expect((await core.readNamespacedConfigMap({ namespace: 'crud', name: 'fin' })).metadata?.finalizers).toEqual(['example.com/b']);
    await core.patchNamespacedConfigMap({ namespace: 'crud', name: 'fin', body: { metadata: { finalizers: null } } }, merge);
    expect(await statusOf(core.readNamespacedConfigMap({ namespace: 'crud', name: 'fin' }))).toMatchObject({ code: 404 });
  });

  it('cascades a namespace deletion to everything in it, honouring finalizers', async () => {
    await core.createNamespace({ body: { metadata: { name: 'doomed' } } });
    await waitFor(() => server.get('v1', 'ServiceAccount', 'default', 'doomed'), { what: 'default service account' });
    await core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'c1' } } });
    await core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'held', finalizers: ['example.com/x'] } } });
    await core.deleteNamespace({ name: 'doomed' });
    const terminating = await core.readNamespace({ name: 'doomed' });
    expect(terminating.status?.phase).toBe('Terminating');
    expect(await statusOf(core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'late' } } }))).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      message: 'configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated',
    });
    await waitFor(() => server.list('v1', 'ConfigMap', 'doomed').length === 1, { what: 'c1 deleted' });
    expect(server.get('v1', 'Namespace', 'doomed')).toBeDefined();
    await core.patchNamespacedConfigMap({ namespace: 'doomed', name: 'held', body: { metadata: { finalizers: null } } }, merge);
    await waitFor(() => server.get('v1', 'Namespace', 'doomed') === undefined, { what: 'namespace removed' });
    expect(server.list('v1', 'ServiceAccount', 'doomed')).toEqual([]);
  });

  it('garbage-collects dependents by ownerReference, and foreground deletion waits for them', async () => {
    const owner = await core.createNamespacedConfigMap({ namespace: 'crud', body: { metadata: { name: 'owner' } } });
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata?.uid ?? '', blockOwnerDeletion: true };
    await core.createNamespacedConfigMap({ namespace: 'crud', body: { metadata: { name: 'dep', ownerReferences: [ref], finalizers: ['example.com/hold'] } } });
    await core.deleteNamespacedConfigMap({ namespace: 'crud', name: 'owner', propagationPolicy: 'Foreground' });
    await waitFor(() => server.get('v1', 'ConfigMap', 'dep', 'crud')?.metadata.deletionTimestamp, { what: 'dependent marked for deletion' });
    expect(server.get('v1', 'ConfigMap', 'owner', 'crud')?.metadata.finalizers).toEqual(['foregroundDeletion']);
    await core.patchNamespacedConfigMap({ namespace: 'crud', name: 'dep', body: { metadata: { finalizers: null } } }, merge);
    await waitFor(() => server.get('v1', 'ConfigMap', 'owner', 'crud') === undefined, { what: 'owner removed after its dependent' });
  });

  it('supports a Lease leader-election loop with resourceVersion preconditions', async () => {
    const now = new k8s.V1MicroTime();
    const lease = await coordination.createNamespacedLease({
      namespace: 'crud',
      body: { metadata: { name: 'leader' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: now, renewTime: now, leaseTransitions: 0 } },
    });
    expect(await statusOf(coordination.createNamespacedLease({ namespace: 'crud', body: { metadata: { name: 'leader' }, spec: { holderIdentity: 'b' } } }))).toMatchObject({
      code: 409,
      reason: 'AlreadyExists',
      message: 'leases.coordination.k8s.io "leader" already exists',
    });
    const renewedByA = await coordination.replaceNamespacedLease({
      namespace: 'crud',
      name: 'leader',
      body: { ...lease, spec: { ...lease.spec, renewTime: new k8s.V1MicroTime() } },
      fieldManager: 'a',
    });
    const takeoverByB = await statusOf(
      coordination.replaceNamespacedLease({ namespace: 'crud', name: 'leader', body: { ...lease, spec: { ...lease.spec, holderIdentity: 'b', leaseTransitions: 1 } }, fieldManager: 'b' }),
    );
    expect(takeoverByB).toMatchObject({ code: 409, reason: 'Conflict', details: { group: 'coordination.k8s.io', kind: 'leases' } });
    const fresh = await coordination.readNamespacedLease({ namespace: 'crud', name: 'leader' });
    expect(fresh.metadata?.resourceVersion).toBe(renewedByA.metadata?.resourceVersion);
    const taken = await coordination.replaceNamespacedLease({ namespace: 'crud', name: 'leader', body: { ...fresh, spec: { ...fresh.spec, holderIdentity: 'b', leaseTransitions: 1 } }, fieldManager: 'b' });
    expect(taken.spec?.holderIdentity).toBe('b');
    expect(server.writeCount('a')).toBe(1);
    expect(server.writeCount('b')).toBe(1);
  });

  it('lets a request hook inject faults', async () => {
    const remove = server.onRequest((req) => (req.verb === 'get' && req.resource === 'configmaps' && req.name === 'flaky' ? { code: 500, reason: 'InternalError', message: 'injected' } : undefined));
    await core.createNamespacedConfigMap({ namespace: 'crud', body: { metadata: { name: 'flaky' } } });
    expect(await statusOf(core.readNamespacedConfigMap({ namespace: 'crud', name: 'flaky' }))).toMatchObject({ code: 500, message: 'injected' });
    remove();
    expect((await core.readNamespacedConfigMap({ namespace: 'crud', name: 'flaky' })).metadata?.name).toBe('flaky');
    const dropOnce = server.onRequest((req) => (req.verb === 'list' && req.resource === 'configmaps' ? { drop: true } : undefined));
    await expect(core.listNamespacedConfigMap({ namespace: 'crud' })).rejects.toThrow();
    dropOnce();
    expect((await core.listNamespacedConfigMap({ namespace: 'crud' })).items.length).toBeGreaterThan(0);
  });

  it('rejects requests without the bearer token unless anonymous access is on', async () => {
    const res = await fetch(`${server.url}/api/v1/namespaces`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    const open = await startK8sTestServer({ anonymous: true, kubelet: { enabled: false } });
    try {
      expect((await fetch(`${open.url}/api/v1/namespaces`)).status).toBe(200);
      expect((await fetch(`${open.url}/api/v1/namespaces`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    } finally {
      await open.close();
    }
  });
});

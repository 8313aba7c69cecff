import * as k8s from '@kubernetes/client-node';
import { startK8sTestServer, type K8sTestServer } from '../src';
import { duplicateKeyErrors, mergeApplied } from '../src/store/managed-fields';
import { statusOf } from './support';

let server: K8sTestServer;
let objects: k8s.KubernetesObjectApi;
let apps: k8s.AppsV1Api;

beforeAll(async () => {
  server = await startK8sTestServer({ kubelet: { enabled: false }, scheduler: false, deploymentController: false });
  objects = k8s.KubernetesObjectApi.makeApiClient(server.kubeConfig());
  apps = server.kubeConfig().makeApiClient(k8s.AppsV1Api);
  await server.kubeConfig().makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name: 'lists' } } });
});
afterAll(async () => {
  await server.close();
});

type Container = k8s.V1Container;

/** A Deployment config carrying only what the test sets (plus the required selector/template). */
const deployment = (name: string, containers: Container[], podSpec: Partial<k8s.V1PodSpec> = {}, metadata: Partial<k8s.V1ObjectMeta> = {}): k8s.V1Deployment => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'lists', ...metadata },
  spec: {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { ...podSpec, containers } },
  },
});

const apply = (obj: k8s.KubernetesObject, manager: string, force?: boolean): Promise<k8s.V1Deployment> =>
  objects.patch<k8s.V1Deployment>(obj, undefined, undefined, manager, force, k8s.PatchStrategy.ServerSideApply);

const envNames = (d: k8s.V1Deployment, container = 0): string[] => (d.spec?.template.spec?.containers[container]?.env ?? []).map((e) => e.name);
const env = (...names: string[]): k8s.V1EnvVar[] => names.map((name) => ({ name, value: name.toLowerCase() }));

describe('server-side apply: duplicate keys in associative lists', () => {
  it('refuses duplicate env names the way kube-apiserver does (500, structured-merge-diff message) and creates nothing', async () => {
    const config = deployment('dup-env', [{ name: 'c', image: 'x:1', env: [{ name: 'FOO', value: 'a' }, { name: 'BAR', value: 'b' }, { name: 'FOO', value: 'c' }] }]);
    const status = await statusOf(apply(config, 'ctl'));
    expect(status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'failed to create typed patch object (lists/dup-env; apps/v1, Kind=Deployment): .spec.template.spec.containers[name="c"].env: duplicate entries for key [name="FOO"]',
      code: 500,
    });
    expect(server.get('apps/v1', 'Deployment', 'dup-env', 'lists')).toBeUndefined();
    expect(server.writeCount('ctl')).toBe(0);
  });

  it('lists every duplicate (containers, ports with the defaulted protocol, volumes, volumeMounts) on separate lines', async () => {
    const config = deployment(
      'dup-many',
      [
        {
          name: 'a',
          image: 'x:1',
          ports: [{ containerPort: 80 }, { containerPort: 80, protocol: 'UDP' }, { containerPort: 80, protocol: 'TCP' }],
          volumeMounts: [{ name: 'v1', mountPath: '/data' }, { name: 'v2', mountPath: '/data' }],
        },
        { name: 'a', image: 'x:2' },
      ],
      { volumes: [{ name: 'v1', emptyDir: {} }, { name: 'v1', emptyDir: {} }] },
    );
    const status = await statusOf(apply(config, 'ctl'));
    expect(status.code).toBe(500);
    expect(status.reason).toBeUndefined();
    expect(status.message).toBe(
      [
        'failed to create typed patch object (lists/dup-many; apps/v1, Kind=Deployment): errors:',
        '  .spec.template.spec.containers[name="a"].ports: duplicate entries for key [containerPort=80,protocol="TCP"]',
        '  .spec.template.spec.containers[name="a"].volumeMounts: duplicate entries for key [mountPath="/data"]',
        '  .spec.template.spec.containers: duplicate entries for key [name="a"]',
        '  .spec.template.spec.volumes: duplicate entries for key [name="v1"]',
      ].join('\n'),
    );
  });

  it('refuses duplicates on an existing object too (typed AppsV1Api, set-typed finalizers) and leaves it untouched', async () => {
    const created = await apply(deployment('dup-update', [{ name: 'c', image: 'x:1', env: env('A') }]), 'ctl');
    const ssa = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.ServerSideApply);
    const body = deployment('dup-update', [{ name: 'c', image: 'x:1', env: env('A') }], {}, { finalizers: ['example.com/f', 'example.com/f'] });
    const status = await statusOf(apps.patchNamespacedDeployment({ namespace: 'lists', name: 'dup-update', body, fieldManager: 'ctl', force: true }, ssa));
    expect(status).toMatchObject({
      code: 500,
      message: 'failed to create typed patch object (lists/dup-update; apps/v1, Kind=Deployment): .metadata.finalizers: duplicate entries for key [="example.com/f"]',
    });
    const after = server.get('apps/v1', 'Deployment', 'dup-update', 'lists');
    expect(after?.metadata.resourceVersion).toBe(created.metadata?.resourceVersion);
    expect(after?.metadata.finalizers).toBeUndefined();
  });

  it('accepts the same port under different protocols, and duplicates written by create (only apply refuses them)', async () => {
    const ok = await apply(deployment('ports-ok', [{ name: 'c', image: 'x:1', ports: [{ containerPort: 53 }, { containerPort: 53, protocol: 'UDP' }] }]), 'ctl');
    expect(ok.spec?.template.spec?.containers[0]?.ports?.map((p) => p.protocol ?? 'TCP')).toEqual(['TCP', 'UDP']);

    const created = await apps.createNamespacedDeployment({ namespace: 'lists', body: deployment('live-dups', [{ name: 'c', image: 'x:1', env: [{ name: 'D', value: '1' }, { name: 'D', value: '2' }] }]), fieldManager: 'creator' });
    expect(envNames(created)).toEqual(['D', 'D']);
    // Another manager applies a field elsewhere: the live duplicates stay as they were.
    const labelled = await apply({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'live-dups', namespace: 'lists', labels: { team: 't' } } }, 'labeller');
    expect(labelled.spec?.template.spec?.containers[0]?.env).toEqual([{ name: 'D', value: '1' }, { name: 'D', value: '2' }]);
    expect(labelled.metadata?.labels).toEqual({ team: 't' });
  });

  it('reports duplicates at any depth, including status conditions and lists inside atomic lists', () => {
    const errors = duplicateKeyErrors({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'a', uid: 'u1' }, { apiVersion: 'v1', kind: 'X', name: 'b', uid: 'u1' }] },
      spec: { initContainers: [{ name: 'i', env: env('E', 'E', 'E') }] },
      status: { conditions: [{ type: 'Ready', status: 'True' }, { type: 'Ready', status: 'False' }] },
    });
    expect(errors).toEqual([
      '.metadata.ownerReferences: duplicate entries for key [uid="u1"]',
      '.spec.initContainers[name="i"].env: duplicate entries for key [name="E"]',
      '.spec.initContainers[name="i"].env: duplicate entries for key [name="E"]',
      '.status.conditions: duplicate entries for key [type="Ready"]',
    ]);
    expect(duplicateKeyErrors({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' } })).toEqual([]);
  });
});

describe('server-side apply: order of merged associative lists', () => {
  it('re-applying a list in another order converges to the applied order', async () => {
    await apply(deployment('order', [{ name: 'c', image: 'x:1', env: env('A', 'B', 'C') }]), 'ctl');
    const reordered = await apply(deployment('order', [{ name: 'c', image: 'x:1', env: env('C', 'A', 'B') }]), 'ctl');
    expect(envNames(reordered)).toEqual(['C', 'A', 'B']);
    // The same for the containers themselves.
    const two = await apply(deployment('order', [{ name: 'c', image: 'x:1', env: env('C', 'A', 'B') }, { name: 'd', image: 'y:1' }]), 'ctl');
    expect(two.spec?.template.spec?.containers.map((c) => c.name)).toEqual(['c', 'd']);
    const swapped = await apply(deployment('order', [{ name: 'd', image: 'y:1' }, { name: 'c', image: 'x:1', env: env('C', 'A', 'B') }]), 'ctl');
    expect(swapped.spec?.template.spec?.containers.map((c) => c.name)).toEqual(['d', 'c']);
    expect(envNames(swapped, 1)).toEqual(['C', 'A', 'B']);
    // A converged re-apply is a no-op: nothing is written.
    const writes = server.writeCount('ctl');
    const again = await apply(deployment('order', [{ name: 'd', image: 'y:1' }, { name: 'c', image: 'x:1', env: env('C', 'A', 'B') }]), 'ctl');
    expect(again.metadata?.resourceVersion).toBe(swapped.metadata?.resourceVersion);
    expect(server.writeCount('ctl')).toBe(writes);
  });

  it('places a new item where the applied list puts it, not at the end', async () => {
    await apply(deployment('insert', [{ name: 'c', image: 'x:1', env: env('A', 'C') }]), 'ctl');
    const inserted = await apply(deployment('insert', [{ name: 'c', image: 'x:1', env: env('A', 'B', 'C') }]), 'ctl');
    expect(envNames(inserted)).toEqual(['A', 'B', 'C']);
    const front = await apply(deployment('insert', [{ name: 'c', image: 'x:1', env: env('Z', 'A', 'B', 'C') }]), 'ctl');
    expect(envNames(front)).toEqual(['Z', 'A', 'B', 'C']);
  });

  it("keeps another manager's items at their relative positions", async () => {
    await apply(deployment('shared', [{ name: 'c', image: 'x:1', env: env('A', 'B') }]), 'ctl');
    const other = await apply(deployment('shared', [{ name: 'c', env: env('X') }]), 'sidecar-injector');
    expect(envNames(other)).toEqual(['A', 'B', 'X']);
    // ctl reorders its own items and adds N: X stays right after B, its neighbour in the live list.
    const reordered = await apply(deployment('shared', [{ name: 'c', image: 'x:1', env: env('B', 'N', 'A') }]), 'ctl');
    expect(envNames(reordered)).toEqual(['B', 'X', 'N', 'A']);
    // ctl drops A: only A goes, the order of the rest is kept.
    const dropped = await apply(deployment('shared', [{ name: 'c', image: 'x:1', env: env('B', 'N') }]), 'ctl');
    expect(envNames(dropped)).toEqual(['B', 'X', 'N']);
    const fields = JSON.stringify(dropped.metadata?.managedFields?.find((m) => m.manager === 'sidecar-injector')?.fieldsV1);
    expect(fields).toContain('k:{\\"name\\":\\"X\\"}');
  });

  it('merges like structured-merge-diff for sets and for live lists holding duplicates', () => {
    expect(mergeApplied({ metadata: { finalizers: ['a', 'x', 'b'] } }, { metadata: { finalizers: ['b', 'a'] } })).toEqual({ metadata: { finalizers: ['x', 'b', 'a'] } });
    // A live key that occurs twice is replaced by the applied item (not merged into either copy).
    expect(mergeApplied({ env: [{ name: 'D', value: '1' }, { name: 'K', value: 'k' }, { name: 'D', value: '2' }] }, { env: [{ name: 'D', value: '3' }] })).toEqual({
      env: [{ name: 'D', value: '3' }, { name: 'K', value: 'k' }],
    });
    // Items the configuration shares are merged field by field.
    expect(mergeApplied({ containers: [{ name: 'c', image: 'x:1', args: ['a'] }] }, { containers: [{ name: 'c', image: 'x:2' }] })).toEqual({ containers: [{ name: 'c', image: 'x:2', args: ['a'] }] });
  });
});

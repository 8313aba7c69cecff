import * as k8s from '@kubernetes/client-node';
import { startK8sTestServer, type K8sTestServer } from '../src';
import { statusOf } from './support';

let server: K8sTestServer;
let objects: k8s.KubernetesObjectApi;

beforeAll(async () => {
  server = await startK8sTestServer({ kubelet: { enabled: false }, scheduler: false, deploymentController: false });
  objects = k8s.KubernetesObjectApi.makeApiClient(server.kubeConfig());
  await server.kubeConfig().makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name: 'ssa' } } });
});
afterAll(async () => {
  await server.close();
});

const deployment = (replicas: number, image: string, extra: Record<string, string> = {}): k8s.KubernetesObject =>
  ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'ssa', labels: { app: 'web', ...extra } },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image }] } },
    },
  }) as k8s.KubernetesObject;

const apply = (obj: k8s.KubernetesObject, manager: string, force?: boolean): Promise<k8s.KubernetesObject> =>
  objects.patch(obj, undefined, undefined, manager, force, k8s.PatchStrategy.ServerSideApply);

type Managed = { manager: string; operation: string; fieldsV1: Record<string, unknown> };
const managers = (o: k8s.KubernetesObject): Managed[] => (o.metadata?.managedFields ?? []) as unknown as Managed[];

describe('server-side apply', () => {
  it('tracks owners, conflicts on a field another manager owns, and transfers ownership with force', async () => {
    const created = await apply(deployment(2, 'nginx:1'), 'controller');
    expect(managers(created).map((m) => [m.manager, m.operation])).toEqual([['controller', 'Apply']]);
    const owned = managers(created)[0]?.fieldsV1 as { 'f:spec': Record<string, unknown> };
    expect(owned['f:spec']).toHaveProperty('f:replicas');
    expect(owned['f:spec']).toMatchObject({ 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"main"}': { '.': {}, 'f:image': {}, 'f:name': {} } } } } });

    // Same values from a second manager: shared ownership, no conflict.
    const shared = await apply({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'ssa' }, spec: { replicas: 2 } } as k8s.KubernetesObject, 'autoscaler');
    expect(managers(shared).map((m) => m.manager).sort()).toEqual(['autoscaler', 'controller']);

    const conflict = await statusOf(apply({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'ssa' }, spec: { replicas: 5 } } as k8s.KubernetesObject, 'hpa'));
    expect(conflict).toMatchObject({ kind: 'Status', code: 409, reason: 'Conflict' });
    expect(conflict.message).toMatch(/^Apply failed with 2 conflicts: conflict with "(controller|autoscaler)" using apps\/v1: \.spec\.replicas/);
    expect(conflict.details?.causes).toContainEqual({ reason: 'FieldManagerConflict', message: 'conflict with "controller" using apps/v1', field: '.spec.replicas' });

    const forced = await apply({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'ssa' }, spec: { replicas: 5 } } as k8s.KubernetesObject, 'hpa', true);
    expect((forced as k8s.V1Deployment).spec?.replicas).toBe(5);
    const byManager = Object.fromEntries(managers(forced).map((m) => [m.manager, m.fieldsV1]));
    expect(byManager.hpa).toEqual({ 'f:spec': { 'f:replicas': {} } });
    expect(JSON.stringify(byManager.controller)).not.toContain('f:replicas');
    expect(byManager.autoscaler).toBeUndefined();

    // The controller re-applies its config without force: now it conflicts with hpa.
    const back = await statusOf(apply(deployment(2, 'nginx:1'), 'controller'));
    expect(back.message).toBe('Apply failed with 1 conflict: conflict with "hpa" using apps/v1: .spec.replicas');
  });

  it('removes fields a manager stops applying, but keeps fields someone else owns', async () => {
    await apply(deployment(1, 'nginx:1', { team: 'a' }), 'owner-a', true);
    await apply({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'ssa', labels: { extra: 'b' } } }, 'owner-b');
    const dropped = (await apply(deployment(1, 'nginx:1'), 'owner-a', true)) as k8s.V1Deployment;
    expect(dropped.metadata?.labels).toEqual({ app: 'web', extra: 'b' });
  });

  it('counts a no-op re-apply as no write and bumps no resourceVersion', async () => {
    const first = await apply(deployment(1, 'nginx:2'), 'owner-a', true);
    const writes = server.writeCount('owner-a');
    const again = await apply(deployment(1, 'nginx:2'), 'owner-a', true);
    expect(again.metadata?.resourceVersion).toBe(first.metadata?.resourceVersion);
    expect(server.writeCount('owner-a')).toBe(writes);
  });

  it('requires a field manager and records Update ownership for non-apply writes', async () => {
    const noManager = await statusOf(objects.patch(deployment(1, 'x'), undefined, undefined, undefined, undefined, k8s.PatchStrategy.ServerSideApply));
    expect(noManager).toMatchObject({ code: 400, message: 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch' });
    const core = server.kubeConfig().makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedConfigMap({ namespace: 'ssa', body: { metadata: { name: 'cm' }, data: { a: '1' } }, fieldManager: 'kubectl-create' });
    const updated = await core.patchNamespacedConfigMap(
      { namespace: 'ssa', name: 'cm', body: { data: { a: '2', b: '1' } }, fieldManager: 'kubectl-edit' },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    const entries = managers(updated);
    expect(entries.map((m) => [m.manager, m.operation])).toEqual([['kubectl-edit', 'Update']]);
    expect(entries[0]?.fieldsV1).toEqual({ 'f:data': { 'f:a': {}, 'f:b': {} } });
  });

  it('works through the typed AppsV1Api with the apply content type and force', async () => {
    const apps = server.kubeConfig().makeApiClient(k8s.AppsV1Api);
    const ssa = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.ServerSideApply);
    const body = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'typed' }, spec: { replicas: 1, selector: { matchLabels: { app: 't' } }, template: { metadata: { labels: { app: 't' } }, spec: { containers: [{ name: 'c', image: 'x:1' }] } } } };
    const created = await apps.patchNamespacedDeployment({ namespace: 'ssa', name: 'typed', body, fieldManager: 'paddock-controller' }, ssa);
    expect(created.spec?.replicas).toBe(1);
    const scaled = await apps.patchNamespacedDeployment({ namespace: 'ssa', name: 'typed', body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'typed' }, spec: { replicas: 3 } }, fieldManager: 'someone-else', force: true }, ssa);
    expect(scaled.spec?.replicas).toBe(3);
    expect(scaled.spec?.template.spec?.containers[0]?.image).toBe('x:1');
    expect(server.writeCount('someone-else')).toBe(1);
  });
});

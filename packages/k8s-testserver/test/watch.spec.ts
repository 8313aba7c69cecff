import * as k8s from '@kubernetes/client-node';
import { waitFor } from '@paddock/testing';
import { startK8sTestServer, type K8sTestServer } from '../src';

let server: K8sTestServer;
let core: k8s.CoreV1Api;
const CHANGES = Number(process.env.PADDOCK_SOAK ? 10_000 : 1_000);

beforeAll(async () => {
  server = await startK8sTestServer({ kubelet: { enabled: false }, scheduler: false, deploymentController: false, bookmarkIntervalMs: 100, watchHistory: 500 });
  core = server.kubeConfig().makeApiClient(k8s.CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: 'w' } } });
});
afterAll(async () => {
  await server.close();
});

function configMapInformer(ns: string): { informer: k8s.Informer<k8s.V1ConfigMap> & k8s.ObjectCache<k8s.V1ConfigMap>; events: string[] } {
  const informer = k8s.makeInformer(server.kubeConfig(), `/api/v1/namespaces/${ns}/configmaps`, () => core.listNamespacedConfigMap({ namespace: ns }));
  const events: string[] = [];
  informer.on(k8s.ADD, (o) => events.push(`ADD ${o.metadata?.name ?? ''}`));
  informer.on(k8s.UPDATE, (o) => events.push(`UPDATE ${o.metadata?.name ?? ''} ${o.data?.v ?? ''}`));
  informer.on(k8s.DELETE, (o) => events.push(`DELETE ${o.metadata?.name ?? ''}`));
  return { informer, events };
}

describe('watch', () => {
  it('feeds an informer ADDED, MODIFIED and DELETED', async () => {
    const { informer, events } = configMapInformer('w');
    await informer.start();
    await core.createNamespacedConfigMap({ namespace: 'w', body: { metadata: { name: 'a' }, data: { v: '1' } } });
    await core.replaceNamespacedConfigMap({ namespace: 'w', name: 'a', body: { metadata: { name: 'a' }, data: { v: '2' } } });
    await core.deleteNamespacedConfigMap({ namespace: 'w', name: 'a' });
    await waitFor(() => events.length === 3, { what: 'three informer events' });
    expect(events).toEqual(['ADD a', 'UPDATE a 2', 'DELETE a']);
    await informer.stop();
  });

  it('relists after expireWatchHistory() (410) without missing a change, and does not spin', async () => {
    await core.createNamespace({ body: { metadata: { name: 'k3' } } });
    const { informer } = configMapInformer('k3');
    const errors: unknown[] = [];
    informer.on(k8s.ERROR, (e) => errors.push(e));
    await informer.start();
    const listsBefore = server.requestCount('list', 'configmaps');
    const every = Math.floor(CHANGES / 4);
    let expiries = 0;
    const expected = new Map<string, string>();
    for (let i = 0; i < CHANGES; i++) {
      const name = `cm-${i % 50}`;
      if (!expected.has(name)) {
        await core.createNamespacedConfigMap({ namespace: 'k3', body: { metadata: { name }, data: { v: String(i) } } });
        expected.set(name, String(i));
      } else if (i % 7 === 0) {
        await core.deleteNamespacedConfigMap({ namespace: 'k3', name });
        expected.delete(name);
      } else {
        await core.replaceNamespacedConfigMap({ namespace: 'k3', name, body: { metadata: { name }, data: { v: String(i) } } });
        expected.set(name, String(i));
      }
      if (i > 0 && i % every === 0) {
        server.expireWatchHistory();
        expiries++;
      }
    }
    const view = (): string =>
      JSON.stringify(
        informer
          .list('k3')
          .map((o) => [o.metadata?.name, o.data?.v])
          .sort(),
      );
    const truth = JSON.stringify([...expected].sort());
    await waitFor(() => view() === truth, { what: 'informer cache equal to the server state', timeoutMs: 20_000 });
    const relists = server.requestCount('list', 'configmaps') - listsBefore;
    expect(errors).toEqual([]);
    // At most one relist per forced 410, and no retry loop.
    console.log(`K-3: ${CHANGES} changes, ${expiries} forced 410s, ${relists} relists, 0 missed`);
    expect(expiries).toBe(3);
    expect(relists).toBeGreaterThanOrEqual(1);
    expect(relists).toBeLessThanOrEqual(expiries);
    await informer.stop();
  });

  it('answers a resume from a compacted resourceVersion with an ERROR event carrying 410 Expired', async () => {
    await core.createNamespacedConfigMap({ namespace: 'w', body: { metadata: { name: 'old' } } });
    server.expireWatchHistory();
    const got: { type: string; object: { code?: number; reason?: string } }[] = [];
    const done = new Promise<unknown>((resolve) => {
      void new k8s.Watch(server.kubeConfig()).watch('/api/v1/namespaces/w/configmaps', { resourceVersion: '1' }, (type, object: { code?: number; reason?: string }) => got.push({ type, object }), resolve);
    });
    await done;
    expect(got).toEqual([{ type: 'ERROR', object: expect.objectContaining({ kind: 'Status', code: 410, reason: 'Expired' }) as unknown }]);
  });

  it('sends BOOKMARK events when asked and ends the stream at timeoutSeconds', async () => {
    const types: string[] = [];
    const rv = String(server.currentResourceVersion());
    let ended = false;
    const controller = await new k8s.Watch(server.kubeConfig()).watch(
      '/api/v1/namespaces/w/configmaps',
      { resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds: 1 },
      (type, obj: { metadata?: { resourceVersion?: string } }) => types.push(`${type}:${obj.metadata?.resourceVersion ?? ''}`),
      () => {
        ended = true;
      },
    );
    await core.createNamespacedConfigMap({ namespace: 'w', body: { metadata: { name: 'bm' } } });
    await waitFor(() => ended, { what: 'watch timeout', timeoutMs: 5000 });
    controller.abort();
    expect(types.some((t) => t.startsWith('ADDED:'))).toBe(true);
    const bookmarks = types.filter((t) => t.startsWith('BOOKMARK:'));
    expect(bookmarks.length).toBeGreaterThanOrEqual(3);
    expect(Number(bookmarks.at(-1)?.split(':')[1])).toBeGreaterThan(Number(rv));
  });

  it('streams a namespace-less watch and filters by label selector, turning label changes into ADDED/DELETED', async () => {
    const seen: string[] = [];
    const controller = await new k8s.Watch(server.kubeConfig()).watch(
      '/api/v1/configmaps',
      { resourceVersion: String(server.currentResourceVersion()), labelSelector: 'watched=yes' },
      (type, obj: k8s.V1ConfigMap) => seen.push(`${type} ${obj.metadata?.name ?? ''}`),
      () => undefined,
    );
    await core.createNamespacedConfigMap({ namespace: 'w', body: { metadata: { name: 'sel', labels: { watched: 'yes' } } } });
    await core.patchNamespacedConfigMap({ namespace: 'w', name: 'sel', body: { metadata: { labels: { watched: 'no' } } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    await core.createNamespacedConfigMap({ namespace: 'w', body: { metadata: { name: 'other' } } });
    await core.patchNamespacedConfigMap({ namespace: 'w', name: 'sel', body: { metadata: { labels: { watched: 'yes' } } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    await waitFor(() => seen.length === 3, { what: 'three filtered events' });
    controller.abort();
    expect(seen).toEqual(['ADDED sel', 'DELETED sel', 'ADDED sel']);
  });
});

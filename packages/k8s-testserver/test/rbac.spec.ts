import * as k8s from '@kubernetes/client-node';
import { roleHook, startK8sTestServer, type K8sTestServer } from '../src';
import { statusOf } from './support';

/** Users with their own tokens, authorized by a Role as RBAC would: what a component's tests run under. */
describe('users and roleHook', () => {
  let server: K8sTestServer;

  beforeAll(async () => {
    server = await startK8sTestServer({ kubelet: { enabled: false }, scheduler: false, users: { alice: 'alice-token', bob: 'bob-token' } });
    const core = server.kubeConfig().makeApiClient(k8s.CoreV1Api);
    for (const name of ['mine', 'theirs']) await core.createNamespace({ body: { metadata: { name } } });
    server.onRequest(roleHook('alice', 'mine', [{ apiGroups: [''], resources: ['configmaps', 'pods/log'], verbs: ['create', 'get'] }]));
  });
  afterAll(async () => {
    await server.close();
  });

  it("grants what the Role grants in its namespace and refuses the rest with RBAC's 403, naming the verb and resource", async () => {
    const alice = server.kubeConfig(undefined, 'alice').makeApiClient(k8s.CoreV1Api);
    await alice.createNamespacedConfigMap({ namespace: 'mine', body: { metadata: { name: 'a' }, data: { k: 'v' } } });
    expect((await alice.readNamespacedConfigMap({ namespace: 'mine', name: 'a' })).data).toEqual({ k: 'v' });
    expect(await statusOf(alice.listNamespacedConfigMap({ namespace: 'mine' }))).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      message: 'configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "mine"',
    });
    expect(await statusOf(alice.deleteNamespacedConfigMap({ namespace: 'mine', name: 'a' }))).toMatchObject({ code: 403 });
    expect(await statusOf(alice.readNamespacedConfigMap({ namespace: 'theirs', name: 'a' }))).toMatchObject({ code: 403 });
    expect(await statusOf(alice.readNamespacedSecret({ namespace: 'mine', name: 'a' }))).toMatchObject({ code: 403 });
    // The server's own user is not the Role's: it may still do anything.
    await server.kubeConfig().makeApiClient(k8s.CoreV1Api).deleteNamespacedConfigMap({ namespace: 'mine', name: 'a' });
  });

  it('a rule with resourceNames grants only requests naming one of them', async () => {
    const core = server.kubeConfig().makeApiClient(k8s.CoreV1Api);
    for (const name of ['one', 'two']) await core.createNamespacedSecret({ namespace: 'theirs', body: { metadata: { name }, stringData: { k: name } } });
    const off = server.onRequest(roleHook('bob', 'theirs', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list'], resourceNames: ['one'] }]));
    try {
      const bob = server.kubeConfig(undefined, 'bob').makeApiClient(k8s.CoreV1Api);
      expect((await bob.readNamespacedSecret({ namespace: 'theirs', name: 'one' })).metadata?.name).toBe('one');
      expect(await statusOf(bob.readNamespacedSecret({ namespace: 'theirs', name: 'two' }))).toMatchObject({ code: 403 });
      // A list names no object: a named rule never grants it.
      expect(await statusOf(bob.listNamespacedSecret({ namespace: 'theirs' }))).toMatchObject({ code: 403 });
    } finally {
      off();
    }
  });

  it('refuses an unknown token, and a kubeConfig for a user it does not have', async () => {
    expect(() => server.kubeConfig(undefined, 'mallory')).toThrow('no user mallory');
    const res = await fetch(`${server.url}/api/v1/namespaces`, { headers: { authorization: 'Bearer wrong' } });
    expect(res.status).toBe(401);
    const ok = await fetch(`${server.url}/api/v1/namespaces/mine/configmaps`, { headers: { authorization: 'Bearer alice-token' } });
    expect(ok.status).toBe(403);
  });
});

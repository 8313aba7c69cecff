import { CoreV1Api, NetworkingV1Api } from '@kubernetes/client-node';
import type * as k8s from '@kubernetes/client-node';
import type { K8sTestServer } from '@paddock/k8s-testserver';
import { KubernetesBackend, podNameFor } from '../../src/backend/kubernetes';
import { createRestrictedNamespace, launchSpec, runnerKubeConfig, startRunnerK8sServer } from './support';

const NS = 'paddock-sandboxes-leftovers';
const POLICY = ['networking.k8s.io/v1', 'NetworkPolicy'] as const;

/**
 * A sandbox pod's Secrets and NetworkPolicy are created before it and cannot be owned by it (the
 * runner may create, read and delete Secrets, never patch them), so the runner deletes them when
 * it sees the pod go, whoever deleted it, and sweeps the policies and Secrets left by a pod that
 * went while no runner watched.
 */
describe('KubernetesBackend: nothing of a sandbox outlives its pod', () => {
  let server: K8sTestServer;
  let backend: KubernetesBackend;
  let core: CoreV1Api;

  beforeAll(async () => {
    server = await startRunnerK8sServer({ nodes: [{ name: 'node-1' }] });
    await createRestrictedNamespace(server.kubeConfig(), NS);
    core = server.kubeConfig().makeApiClient(CoreV1Api);
    backend = new KubernetesBackend({ runnerId: 'runner-a', namespace: NS, kubeConfig: runnerKubeConfig(server, NS), runtimeClasses: [] });
  });
  afterAll(async () => {
    await backend.close();
    await server.close();
  });

  it('a pod deleted behind the runner (kubectl delete pod) takes its pull and env Secrets and its policy with it', async () => {
    const config = JSON.stringify({ auths: { 'registry.example:5000': { auth: Buffer.from('u:p').toString('base64') } } });
    const spec = launchSpec({ sandboxId: 'sb-byhand', imagePullRegistries: ['registry.example:5000'], imagePullDockerConfig: config });
    await backend.launch({ ...spec, env: { ...spec.env, API_KEY: 'k-123' }, secretEnvNames: ['API_KEY'] });
    const pod = podNameFor('sb-byhand');
    const leftovers = (): unknown[] => [server.get('v1', 'Secret', `${pod}-pull`, NS), server.get('v1', 'Secret', `${pod}-env`, NS), server.get(...POLICY, pod, NS)];
    expect(leftovers().every((o) => o !== undefined)).toBe(true);
    await core.deleteNamespacedPod({ name: pod, namespace: NS, gracePeriodSeconds: 0 });
    await expect.poll(leftovers, { timeout: 5_000 }).toEqual([undefined, undefined, undefined]);
  });

  it('a stopped sandbox leaves no NetworkPolicy behind', async () => {
    await backend.launch(launchSpec({ sandboxId: 'sb-stopped' }));
    const pod = podNameFor('sb-stopped');
    expect(server.get(...POLICY, pod, NS)).toBeDefined();
    await backend.stop('sb-stopped', 0, 'STOPPED_BY_USER');
    await expect.poll(() => server.get(...POLICY, pod, NS), { timeout: 5_000 }).toBeUndefined();
  });

  it("a restarted runner deletes the policies and Secrets of pods that went while it was down, once past a launch's grace, and keeps the others", async () => {
    const kept = launchSpec({ sandboxId: 'sb-kept' });
    await backend.launch({ ...kept, env: { ...kept.env, API_KEY: 'k-kept' }, secretEnvNames: ['API_KEY'] });
    // A policy whose pod is gone, as a runner down when the pod was deleted leaves it.
    const orphan = podNameFor('sb-gone');
    const body: k8s.V1NetworkPolicy = {
      metadata: { name: orphan, namespace: NS, labels: { 'paddock.dev/runner-id': 'runner-a', 'paddock.dev/sandbox-id': 'sb-gone' } },
      spec: { podSelector: { matchLabels: { 'paddock.dev/sandbox-id': 'sb-gone' } }, policyTypes: ['Ingress', 'Egress'] },
    };
    await server.kubeConfig().makeApiClient(NetworkingV1Api).createNamespacedNetworkPolicy({ namespace: NS, body });
    // And its credentials, as the launch created them before the pod.
    for (const name of [`${orphan}-pull`, `${orphan}-env`]) {
      await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name, namespace: NS, labels: body.metadata?.labels ?? {} }, stringData: { k: 'v' } } });
    }
    const orphanSecrets = (): unknown[] => [server.get('v1', 'Secret', `${orphan}-pull`, NS), server.get('v1', 'Secret', `${orphan}-env`, NS)];
    const soon = new KubernetesBackend({ runnerId: 'runner-a', namespace: NS, kubeConfig: runnerKubeConfig(server, NS), now: () => Date.now() + 10_000 });
    const later = new KubernetesBackend({ runnerId: 'runner-a', namespace: NS, kubeConfig: runnerKubeConfig(server, NS), now: () => Date.now() + 120_000 });
    try {
      // Within the grace, it may be a launch of another replica whose pod is a few calls away.
      await soon.recover();
      expect(server.get(...POLICY, orphan, NS)).toBeDefined();
      expect(orphanSecrets().every((o) => o !== undefined)).toBe(true);
      await later.recover();
      expect(server.get(...POLICY, orphan, NS)).toBeUndefined();
      expect(orphanSecrets()).toEqual([undefined, undefined]);
      expect(server.get(...POLICY, podNameFor('sb-kept'), NS)).toBeDefined();
      expect(server.get('v1', 'Secret', `${podNameFor('sb-kept')}-env`, NS)).toBeDefined();
    } finally {
      await soon.close();
      await later.close();
    }
  });
});

import type { K8sTestServer } from '@paddock/k8s-testserver';
import { waitFor } from '@paddock/testing';
import { KubernetesBackend, podNameFor } from '../../src/backend/kubernetes';
import type { BackendEvent } from '../../src/backend/sandbox-backend';
import { parseRunnerEnv } from '../../src/config/env';
import { createRestrictedNamespace, launchSpec, runnerKubeConfig, startRunnerK8sServer } from './support';

const NS = 'paddock-sandboxes-images';

/** One spec means the same image on both backends: the reference as given, and the runner's pull credentials. */
describe('KubernetesBackend: image references and pull secrets', () => {
  let server: K8sTestServer;
  beforeAll(async () => {
    server = await startRunnerK8sServer({ nodes: [{ name: 'node-1' }] });
    await createRestrictedNamespace(server.kubeConfig(), NS);
  });
  afterAll(async () => {
    await server.close();
  });

  it('passes the image reference through untouched and names the configured pull secrets', async () => {
    const env = parseRunnerEnv({ PADDOCK_SANDBOX_IMAGE_PULL_SECRETS: 'registry-a, registry-b' });
    if (!env.ok) throw new Error(env.message);
    const bad = parseRunnerEnv({ PADDOCK_SANDBOX_IMAGE_PULL_SECRETS: 'Not_A_Name' });
    expect(bad.ok ? '' : bad.errors.join(' ')).toContain('PADDOCK_SANDBOX_IMAGE_PULL_SECRETS');
    const backend = new KubernetesBackend({ runnerId: 'runner-img', namespace: NS, kubeConfig: runnerKubeConfig(server, NS), runtimeClasses: [], imagePullSecrets: env.env.PADDOCK_SANDBOX_IMAGE_PULL_SECRETS });
    const events: BackendEvent[] = [];
    backend.onEvent((e) => events.push(e));
    try {
      const digest = `sha256:${'b'.repeat(64)}`;
      for (const [id, image] of [
        ['by-tag', '127.0.0.1:5000/paddock/test:v1'],
        ['by-digest', `127.0.0.1:5000/paddock/test@${digest}`],
      ] as const) {
        await backend.launch(launchSpec({ sandboxId: id, image, runnerId: 'runner-img' }));
        await waitFor(() => events.find((e) => e.sandboxId === id && e.state === 'STATE_RUNNING'), { what: `${id} RUNNING` });
        const pod = server.get('v1', 'Pod', podNameFor(id), NS) as { spec?: { imagePullSecrets?: unknown; containers?: { image?: string }[] } } | undefined;
        expect(pod?.spec?.containers?.[0]?.image).toBe(image);
        expect(pod?.spec?.imagePullSecrets).toEqual([{ name: 'registry-a' }, { name: 'registry-b' }]);
      }
    } finally {
      await backend.close();
    }
  });
  it('refuses by name a tag the policy admits only at pinned digests (the kubelet resolves tags, after the pod exists)', async () => {
    const backend = new KubernetesBackend({ runnerId: 'runner-img', namespace: NS, kubeConfig: runnerKubeConfig(server, NS), runtimeClasses: [] });
    try {
      const pin = `sha256:${'c'.repeat(64)}`;
      const launch = backend.launch(launchSpec({ sandboxId: 'pinned-tag', image: '127.0.0.1:5000/paddock/test:v1', imageDigests: [pin], runnerId: 'runner-img' }));
      await expect(launch).rejects.toThrow(`constraints.image.allowedImages admits this tag only at ${pin}`);
      expect(server.get('v1', 'Pod', podNameFor('pinned-tag'), NS)).toBeUndefined();
    } finally {
      await backend.close();
    }
  });
});

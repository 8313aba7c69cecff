import type { K8sTestServer } from '@paddock/k8s-testserver';
import { checkPodSecurityRestricted, validateManifest, type PodSpec } from '@paddock/k8s-testserver';
import type * as k8s from '@kubernetes/client-node';
import { KubernetesBackend, podNameFor } from '../../src/backend/kubernetes';
import { createRestrictedNamespace, launchSpec, runnerKubeConfig, startRunnerK8sServer } from './support';

const NS = 'paddock-sandboxes-pull';

/** Image pull credentials on the Kubernetes backend: a dockerconfigjson Secret per sandbox, referenced by its pod, gone with it. */
describe('KubernetesBackend image pull credentials', () => {
  let server: K8sTestServer;
  let backend: KubernetesBackend;

  beforeAll(async () => {
    server = await startRunnerK8sServer({ nodes: [{ name: 'node-1' }] });
    await createRestrictedNamespace(server.kubeConfig(), NS);
    backend = new KubernetesBackend({ runnerId: 'runner-a', namespace: NS, kubeConfig: runnerKubeConfig(server, NS), runtimeClasses: [] });
  });
  afterAll(async () => {
    await backend.close();
    await server.close();
  });

  it('creates a kubernetes.io/dockerconfigjson Secret the pod lists in imagePullSecrets, valid and inside restricted', async () => {
    const config = JSON.stringify({ auths: { 'registry.example:5000': { username: 'u', password: 'p', auth: Buffer.from('u:p').toString('base64') } } });
    await backend.launch(launchSpec({ sandboxId: 'sb-pull', imagePullRegistries: ['registry.example:5000'], imagePullDockerConfig: config }));
    const name = `${podNameFor('sb-pull')}-pull`;
    const secret = server.get('v1', 'Secret', name, NS) as k8s.V1Secret | undefined;
    expect(secret?.type).toBe('kubernetes.io/dockerconfigjson');
    expect(Buffer.from(secret?.data?.['.dockerconfigjson'] ?? '', 'base64').toString('utf8')).toBe(config);
    expect(validateManifest(secret)).toEqual([]);
    const pod = server.get('v1', 'Pod', podNameFor('sb-pull'), NS) as k8s.V1Pod | undefined;
    expect(pod?.spec?.imagePullSecrets).toEqual([{ name }]);
    expect(validateManifest(pod)).toEqual([]);
    expect(checkPodSecurityRestricted(pod?.spec as unknown as PodSpec)).toEqual([]);
    // Neither the pod's labels nor its annotations carry the credentials.
    expect(JSON.stringify(pod?.metadata)).not.toContain('"password"');
    await backend.stop('sb-pull', 0, 'STOPPED_BY_USER');
    expect(server.get('v1', 'Secret', name, NS)).toBeUndefined();
  });

  it('refuses a launch that names registries without their resolved config, creating nothing', async () => {
    await expect(backend.launch(launchSpec({ sandboxId: 'sb-nocfg', imagePullRegistries: ['ghcr.io'] }))).rejects.toThrow('image pull credentials were not resolved');
    expect(server.get('v1', 'Pod', podNameFor('sb-nocfg'), NS)).toBeUndefined();
  });
});

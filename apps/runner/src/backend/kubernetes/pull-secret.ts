import type * as k8s from '@kubernetes/client-node';
import type { LaunchSpec } from '../sandbox-backend';

/**
 * A sandbox's image pull credentials become one `kubernetes.io/dockerconfigjson` Secret of its
 * own, named after its pod and deleted with it, which the pod lists in `imagePullSecrets`. The
 * Docker config JSON comes resolved with the create; it is written nowhere but this Secret.
 */
export function pullSecretNameFor(podName: string): string {
  return `${podName}-pull`;
}

/** The pod's `imagePullSecrets` when the spec asks for pull credentials. */
export function imagePullSecretsOf(spec: Pick<LaunchSpec, 'imagePullRegistries'>, podName: string): { imagePullSecrets?: k8s.V1LocalObjectReference[] } {
  return spec.imagePullRegistries?.length ? { imagePullSecrets: [{ name: pullSecretNameFor(podName) }] } : {};
}

export function buildPullSecret(spec: Pick<LaunchSpec, 'imagePullDockerConfig'>, podName: string, namespace: string, labels: Record<string, string>): k8s.V1Secret | undefined {
  if (!spec.imagePullDockerConfig) return undefined;
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: pullSecretNameFor(podName), namespace, labels },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(spec.imagePullDockerConfig, 'utf8').toString('base64') },
  };
}

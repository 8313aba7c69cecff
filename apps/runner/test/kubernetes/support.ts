import * as k8s from '@kubernetes/client-node';
import type { LaunchSpec } from '../../src/backend/sandbox-backend';

export const RESTRICTED_NAMESPACE_LABELS = { 'pod-security.kubernetes.io/enforce': 'restricted' };

export async function createRestrictedNamespace(kc: k8s.KubeConfig, name: string): Promise<void> {
  await kc.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name, labels: RESTRICTED_NAMESPACE_LABELS } } });
}

export function launchSpec(over: Partial<LaunchSpec> & { sandboxId: string }): LaunchSpec {
  return {
    organizationId: 'org-1',
    runnerId: 'runner-a',
    image: 'paddock/base:1',
    command: [],
    env: {},
    cpuMillis: 500,
    memoryBytes: 256 * 1024 * 1024,
    pidsMax: 256,
    diskBytes: 1024 * 1024 * 1024,
    openFilesMax: 1024,
    lifetimeSeconds: 600,
    network: 'none',
    files: [],
    labels: {},
    ...over,
  };
}

import * as k8s from '@kubernetes/client-node';
import { RUNNER_SANDBOX_NAMESPACE_RULES } from '@paddock/contracts';
import { roleHook, startK8sTestServer, type K8sTestServer, type K8sTestServerOptions } from '@paddock/k8s-testserver';
import type { LaunchSpec } from '../../src/backend/sandbox-backend';

const RUNNER_USER = 'runner';

/** A test server with the runner's own identity besides the test's (which may do anything). */
export function startRunnerK8sServer(opts: K8sTestServerOptions = {}): Promise<K8sTestServer> {
  return startK8sTestServer({ ...opts, users: { ...opts.users, [RUNNER_USER]: 'runner-token' } });
}

const roled = new WeakMap<K8sTestServer, Set<string>>();

/**
 * The runner's credentials, authorized by the Role the controller grants it in `namespace` and by
 * nothing else: a call the backend makes that the Role does not grant fails the test with RBAC's 403.
 */
export function runnerKubeConfig(server: K8sTestServer, namespace: string): k8s.KubeConfig {
  const done = roled.get(server) ?? new Set<string>();
  if (!done.has(namespace)) server.onRequest(roleHook(RUNNER_USER, namespace, RUNNER_SANDBOX_NAMESPACE_RULES));
  roled.set(server, done.add(namespace));
  return server.kubeConfig(undefined, RUNNER_USER);
}

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

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { rbacRulesIn, roleHook, type K8sTestServer } from '@paddock/k8s-testserver';

/** The name the controller's own requests carry on a test server started with its token in `users`. */
export const CONTROLLER_USER = 'controller';

/** The ClusterRole a deployment grants the controller, read from the manifest it applies. */
const CONTROLLER_RULES = rbacRulesIn(readFileSync(join(__dirname, '../../../../infra/k8s/base/controller-rbac.yaml'), 'utf8'), 'ClusterRole', 'paddock-controller');

const authorized = new WeakSet<K8sTestServer>();

/**
 * The controller's credentials, authorized by that ClusterRole and nothing else: a call the
 * controller makes that its deployment does not grant fails the test with RBAC's 403.
 */
export function controllerKubeConfig(server: K8sTestServer): KubeConfig {
  if (!authorized.has(server)) server.onRequest(roleHook(CONTROLLER_USER, '*', CONTROLLER_RULES));
  authorized.add(server);
  return server.kubeConfig(undefined, CONTROLLER_USER);
}

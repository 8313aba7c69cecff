/** One rule of a Kubernetes Role, as RBAC reads it. */
export interface RbacRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/**
 * The ClusterRole that holds `RUNNER_SANDBOX_NAMESPACE_RULES` (installed with the controller, in
 * infra/k8s/base/controller-rbac.yaml). The controller binds it in each runner's sandbox
 * namespace with a RoleBinding, and may bind nothing else: RBAC lets it create that binding
 * through `bind` on this one name, so it needs neither `escalate` (which would let it write a
 * Role granting anything, to anyone) nor the rules themselves (which would give it, cluster-wide,
 * exec into pods and reads of Secrets).
 */
export const RUNNER_SANDBOX_CLUSTER_ROLE = 'paddock-runner-sandbox';

/**
 * What a runner may do in its sandbox namespace: the controller grants exactly these rules to the
 * runner's ServiceAccount (binding RUNNER_SANDBOX_CLUSTER_ROLE there), and the runner's Kubernetes tests run its backend under them (the API
 * test server refuses anything else with a 403, as RBAC would), so a call the backend starts
 * making is either granted here or fails in tests, never first in a cluster.
 *
 * Least privilege: sandbox pods (and their exec and logs), their NetworkPolicies, the Services of
 * their public ports, and the Secrets the runner itself writes for them. Secrets: create and
 * delete, and `get`, which a restarted runner needs to read back a warm take's secret env (the
 * create's delivered values, which exist nowhere else). Never `list`, `watch` or `patch` on
 * Secrets: those would let the runner find and read, or rewrite, the namespace's other Secrets
 * without knowing their names.
 */
export const RUNNER_SANDBOX_NAMESPACE_RULES: readonly RbacRule[] = [
  { apiGroups: [''], resources: ['pods'], verbs: ['create', 'delete', 'get', 'list', 'watch', 'patch'] },
  { apiGroups: [''], resources: ['pods/exec', 'pods/log'], verbs: ['create', 'get'] },
  { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: ['create', 'delete', 'get', 'list', 'patch'] },
  { apiGroups: [''], resources: ['secrets'], verbs: ['create', 'delete', 'get'] },
  { apiGroups: [''], resources: ['services'], verbs: ['create', 'delete'] },
];

/** The resource types this server serves, with the facts discovery and the REST layer need. */

export interface ResourceType {
  group: string;
  version: string;
  kind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames?: string[];
  /** Subresources served under `<plural>/<name>/<sub>`. */
  subresources: string[];
}

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

const core = (kind: string, plural: string, namespaced: boolean, subresources: string[] = [], shortNames?: string[]): ResourceType => ({
  group: '',
  version: 'v1',
  kind,
  plural,
  singular: kind.toLowerCase(),
  namespaced,
  subresources,
  ...(shortNames ? { shortNames } : {}),
});

const grouped = (
  group: string,
  version: string,
  kind: string,
  plural: string,
  namespaced: boolean,
  subresources: string[] = [],
  shortNames?: string[],
): ResourceType => ({ ...core(kind, plural, namespaced, subresources, shortNames), group, version });

export const RESOURCE_TYPES: readonly ResourceType[] = [
  core('Namespace', 'namespaces', false, ['status', 'finalize'], ['ns']),
  core('ConfigMap', 'configmaps', true, [], ['cm']),
  core('Secret', 'secrets', true),
  core('ServiceAccount', 'serviceaccounts', true, [], ['sa']),
  core('Service', 'services', true, ['status'], ['svc']),
  core('Event', 'events', true, [], ['ev']),
  core('Node', 'nodes', false, ['status'], ['no']),
  core('Pod', 'pods', true, ['status', 'log', 'exec', 'binding'], ['po']),
  core('ResourceQuota', 'resourcequotas', true, ['status'], ['quota']),
  grouped('apps', 'v1', 'Deployment', 'deployments', true, ['status', 'scale'], ['deploy']),
  grouped('apps', 'v1', 'ReplicaSet', 'replicasets', true, ['status', 'scale'], ['rs']),
  grouped('coordination.k8s.io', 'v1', 'Lease', 'leases', true),
  grouped('rbac.authorization.k8s.io', 'v1', 'Role', 'roles', true),
  grouped('rbac.authorization.k8s.io', 'v1', 'RoleBinding', 'rolebindings', true),
  grouped('rbac.authorization.k8s.io', 'v1', 'ClusterRole', 'clusterroles', false),
  grouped('rbac.authorization.k8s.io', 'v1', 'ClusterRoleBinding', 'clusterrolebindings', false),
  grouped('networking.k8s.io', 'v1', 'NetworkPolicy', 'networkpolicies', true, [], ['netpol']),
  grouped('node.k8s.io', 'v1', 'RuntimeClass', 'runtimeclasses', false),
  grouped('events.k8s.io', 'v1', 'Event', 'events', true, [], ['ev']),
];

export const apiVersionOf = (r: ResourceType): string => (r.group ? `${r.group}/${r.version}` : r.version);

/** `pods`, `deployments.apps`: the qualified resource the API server names in its messages. */
export const qualifiedResource = (r: ResourceType): string => (r.group ? `${r.plural}.${r.group}` : r.plural);

/** Identity of a resource type inside the store. */
export const resourceKey = (r: ResourceType): string => `${r.group}/${r.plural}`;

export function findByPlural(group: string, version: string, plural: string): ResourceType | undefined {
  return RESOURCE_TYPES.find((r) => r.group === group && r.version === version && r.plural === plural);
}

export function findByKind(apiVersion: string, kind: string): ResourceType | undefined {
  return RESOURCE_TYPES.find((r) => apiVersionOf(r) === apiVersion && r.kind === kind);
}

export function mustFindByKind(apiVersion: string, kind: string): ResourceType {
  const r = findByKind(apiVersion, kind);
  if (!r) throw new Error(`k8s-testserver does not serve ${apiVersion} ${kind}`);
  return r;
}

export const hasStatusSubresource = (r: ResourceType): boolean => r.subresources.includes('status');

export function discoveryResources(group: string, version: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const r of RESOURCE_TYPES) {
    if (r.group !== group || r.version !== version) continue;
    out.push({
      name: r.plural,
      singularName: r.singular,
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: ALL_VERBS,
      ...(r.shortNames ? { shortNames: r.shortNames } : {}),
      storageVersionHash: Buffer.from(`${group}/${r.plural}`).toString('base64').slice(0, 11),
    });
    for (const sub of r.subresources) {
      const verbs = sub === 'exec' ? ['create', 'get'] : sub === 'log' ? ['get'] : sub === 'binding' ? ['create'] : ['get', 'patch', 'update'];
      out.push({ name: `${r.plural}/${sub}`, singularName: '', namespaced: r.namespaced, kind: sub === 'scale' ? 'Scale' : sub === 'exec' ? 'PodExecOptions' : sub === 'log' ? 'Pod' : sub === 'binding' ? 'Binding' : r.kind, verbs });
    }
  }
  return out;
}

export function apiGroups(): { name: string; versions: string[] }[] {
  const groups = new Map<string, Set<string>>();
  for (const r of RESOURCE_TYPES) {
    if (!r.group) continue;
    const set = groups.get(r.group) ?? new Set<string>();
    set.add(r.version);
    groups.set(r.group, set);
  }
  return [...groups].map(([name, versions]) => ({ name, versions: [...versions] }));
}

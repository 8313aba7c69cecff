import { parseAllDocuments } from 'yaml';
import type { RequestHook } from './server';

/** One Role rule, as RBAC reads it. */
export interface RoleRule {
  apiGroups: readonly string[];
  resources: readonly string[];
  verbs: readonly string[];
  /** When set, the rule grants only requests naming one of these objects (as RBAC: not create, list or watch). */
  resourceNames?: readonly string[];
}

const has = (list: readonly string[], value: string): boolean => list.includes('*') || list.includes(value);

/**
 * A request hook that authorizes `user`'s requests as a Role bound in `namespace` would (or, for
 * `namespace` = `*`, a ClusterRole bound cluster-wide): a resource request outside the namespace,
 * or one no rule grants (verb, API group, resource or `resource/subresource`), gets RBAC's 403.
 * Discovery and other non-resource paths pass, as the default `system:discovery` binding lets
 * them; other users' requests are not looked at.
 */
export function roleHook(user: string, namespace: string, rules: readonly RoleRule[]): RequestHook {
  return (req) => {
    if (req.user !== user || req.resource === undefined) return;
    const resource = req.subresource ? `${req.resource}/${req.subresource}` : req.resource;
    const group = req.group ?? '';
    const named = (r: RoleRule): boolean => r.resourceNames === undefined || r.resourceNames.length === 0 || (req.name !== undefined && r.resourceNames.includes(req.name));
    const granted =
      (namespace === '*' || req.namespace === namespace) && rules.some((r) => has(r.apiGroups, group) && has(r.resources, resource) && has(r.verbs, req.verb) && named(r));
    if (granted) return;
    const where = req.namespace ? `in the namespace "${req.namespace}"` : 'at the cluster scope';
    return {
      code: 403,
      reason: 'Forbidden',
      message: `${resource}${group ? `.${group}` : ''}${req.name ? ` "${req.name}"` : ''} is forbidden: User "${user}" cannot ${req.verb} resource "${resource}" in API group "${group}" ${where}`,
    };
  };
}

/** The rules of the Role or ClusterRole `name` in a multi-document manifest (what a deployment applies). */
export function rbacRulesIn(manifest: string, kind: 'Role' | 'ClusterRole', name: string): RoleRule[] {
  for (const doc of parseAllDocuments(manifest)) {
    const o = doc.toJS() as { kind?: string; metadata?: { name?: string }; rules?: RoleRule[] } | null;
    if (o?.kind === kind && o.metadata?.name === name) return o.rules ?? [];
  }
  throw new Error(`no ${kind} ${name} in the manifest`);
}

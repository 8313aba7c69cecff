import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { rbacRulesIn, type RoleRule } from '@paddock/k8s-testserver';
import { RUNNER_SANDBOX_CLUSTER_ROLE, RUNNER_SANDBOX_NAMESPACE_RULES } from '@paddock/contracts';
import { buildRunnerObjects } from '../src/builders/runner.manifests';
import { minimalRunner } from './support/minimal-runner';

const manifest = readFileSync(join(__dirname, '../../../infra/k8s/base/controller-rbac.yaml'), 'utf8');
const controller = rbacRulesIn(manifest, 'ClusterRole', 'paddock-controller');
const RBAC = 'rbac.authorization.k8s.io';

const covers = (list: readonly string[], v: string): boolean => list.includes('*') || list.includes(v);

/** Whether `rules` grant `verb` on `group/resource` named `name` (RBAC's rule match). */
function grants(rules: readonly RoleRule[], group: string, resource: string, verb: string, name?: string): boolean {
  return rules.some(
    (r) => covers(r.apiGroups, group) && covers(r.resources, resource) && covers(r.verbs, verb) && (!r.resourceNames?.length || (name !== undefined && r.resourceNames.includes(name))),
  );
}

/** Whether `holder` holds every permission of `rules` (the escalation check's other way out). */
function holdsAll(holder: readonly RoleRule[], rules: readonly RoleRule[]): boolean {
  return rules.every((r) => r.apiGroups.every((g) => r.resources.every((res) => r.verbs.every((v) => grants(holder, g, res, v)))));
}

const desired = minimalRunner('rbac', '6f1c0c4e-0000-4000-8000-0000000000a1');

/**
 * The API test server stores RBAC objects without enforcing RBAC's escalation rules, so they are
 * applied here to what the controller writes: a Role may be created only by who holds its rules
 * or has `escalate`, a binding only by who holds the bound role's rules or has `bind` on it.
 */
describe('the RBAC the controller holds and grants', () => {
  it("installs the runner's sandbox-namespace rules as the ClusterRole the contract names, rule for rule", () => {
    expect(rbacRulesIn(manifest, 'ClusterRole', RUNNER_SANDBOX_CLUSTER_ROLE)).toEqual(RUNNER_SANDBOX_NAMESPACE_RULES);
  });

  it('grants the controller no escalate, and bind on that one ClusterRole only', () => {
    expect(controller.filter((r) => covers(r.verbs, 'escalate'))).toEqual([]);
    expect(controller.filter((r) => covers(r.verbs, 'bind'))).toEqual([{ apiGroups: [RBAC], resources: ['clusterroles'], resourceNames: [RUNNER_SANDBOX_CLUSTER_ROLE], verbs: ['bind'] }]);
    // Nor the runner's own rules, which it would hold cluster-wide.
    expect(grants(controller, '', 'pods/exec', 'create')).toBe(false);
    expect(grants(controller, '', 'secrets', 'get')).toBe(false);
  });

  it('may create every RBAC object it builds for a runner, as the API server would judge it', () => {
    const objects = buildRunnerObjects(desired, { natsUrl: 'nats://nats:4222', natsCreds: 'creds' });
    const rbac = objects.filter((o) => o.apiVersion === `${RBAC}/v1`);
    expect(rbac.map((o) => o.kind)).toEqual(['RoleBinding']);
    for (const o of rbac) {
      const ref = (o as unknown as { roleRef: { kind: string; name: string } }).roleRef;
      expect(ref).toEqual({ apiGroup: RBAC, kind: 'ClusterRole', name: RUNNER_SANDBOX_CLUSTER_ROLE });
      const bound = rbacRulesIn(manifest, 'ClusterRole', ref.name);
      expect(grants(controller, RBAC, 'rolebindings', 'patch')).toBe(true);
      expect(grants(controller, RBAC, 'clusterroles', 'bind', ref.name) || holdsAll(controller, bound)).toBe(true);
    }
    // The Role earlier releases wrote could not be created now (the controller neither holds its
    // rules nor may escalate): the builders must never emit it again.
    expect(holdsAll(controller, RUNNER_SANDBOX_NAMESPACE_RULES)).toBe(false);
  });
});

import { validateManifest, manifestProblems } from '../src';

describe('validateManifest', () => {
  it('accepts valid manifests of every served kind', () => {
    const good = [
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } } },
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }] } },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'b' } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 's' }, automountServiceAccountToken: false },
      { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'r' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'b' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'r' }, subjects: [{ kind: 'ServiceAccount', name: 's', namespace: 'n' }] },
      { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'np' }, spec: { podSelector: {}, policyTypes: ['Ingress', 'Egress'] } },
      { apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: 'gvisor' }, handler: 'runsc' },
      { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard: { pods: '10' } } },
    ];
    for (const m of good) expect({ kind: m.kind, problems: validateManifest(m) }).toEqual({ kind: m.kind, problems: [] });
  });

  it('names the field and the rule for invalid ones', () => {
    expect(validateManifest({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { template: {} } })).toEqual(['spec.selector: Required value']);
    expect(manifestProblems({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ image: 'x' }] } })).toEqual([
      { field: 'spec.containers[0].name', reason: 'FieldValueRequired', message: 'Required value' },
    ]);
    expect(validateManifest({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 'http' }] }] } })[0]).toMatch(
      /^spec\.containers\[0\]\.ports\[0\]\.containerPort: Invalid value: must be/,
    );
    expect(validateManifest({ apiVersion: 'v9', kind: 'Nope' })).toEqual(['kind: no schema known for v9 Nope']);
  });
});

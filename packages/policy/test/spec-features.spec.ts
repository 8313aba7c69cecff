import { FULL_CAPABILITIES, SPEC_FEATURES, type RunnerCapabilities, type SpecFeature } from '@paddock/contracts';
import { explainPlacement, resolveSandboxSpec, specFeatureUses } from '../src/index';

const without = (...features: SpecFeature[]): RunnerCapabilities => ({
  ...FULL_CAPABILITIES,
  specFeatures: SPEC_FEATURES.filter((f) => !features.includes(f)),
});

describe('spec features', () => {
  it('names the exact field of each use; values that ask for nothing use no feature', () => {
    const spec = {
      containers: [
        { name: 'side', command: ['sleep', '1'] },
        {
          name: 'app',
          primary: true,
          startupProbe: { httpGet: { port: 80 } },
          volumeMounts: [{ volume: 'v', mountPath: '/v', readOnly: true, subPath: 'x' }],
          securityContext: { privileged: false, allowPrivilegeEscalation: false, seccompProfile: 'RuntimeDefault', capabilitiesAdd: [] },
          resources: { gpu: { count: 1, memoryGb: 40 } },
        },
      ],
      initContainers: [{ name: 'setup', secretStores: [{ name: 's' }] }],
      volumes: [{ name: 'v', scratch: { restoreFromSnapshotId: 'snap' } }],
      services: [{ port: 80 }],
      annotations: {},
      networkIds: [],
      network: { dnsEgress: 'DNS_EGRESS_MODE_UNSPECIFIED' },
    };
    expect(specFeatureUses(spec, 'app')).toEqual([
      { feature: 'containers.multiple', field: 'containers[0]' },
      { feature: 'containers.multiple', field: 'containers[1].primary' },
      { feature: 'volumeMounts', field: 'containers[1].volumeMounts[0]' },
      { feature: 'volumeMounts.readOnly', field: 'containers[1].volumeMounts[0].readOnly' },
      { feature: 'volumeMounts.subPath', field: 'containers[1].volumeMounts[0].subPath' },
      { feature: 'startupProbe', field: 'containers[1].startupProbe' },
      { feature: 'gpu.memoryGb', field: 'containers[1].resources.gpu.memoryGb' },
      { feature: 'initContainers', field: 'initContainers[0]' },
      { feature: 'secretStores', field: 'initContainers[0].secretStores' },
      { feature: 'volumes.scratch', field: 'volumes[0]' },
      { feature: 'volumes.restoreFromSnapshot', field: 'volumes[0].scratch.restoreFromSnapshotId' },
      { feature: 'services', field: 'services[0]' },
    ]);
    // One container: naming it primary chooses nothing, so it needs no feature.
    expect(specFeatureUses({ containers: [{ name: 'a', primary: true }], primaryContainer: 'a' }, 'a')).toEqual([]);
    expect(specFeatureUses({ containers: 'not a list', volumes: [null, 3] }, 'main')).toEqual([]);
  });

  it('refuses a use the runner does not declare, as runner_capability on the field; admits it where declared', () => {
    const spec = { containers: [{ image: 'python:3.12', startupProbe: { exec: { command: ['true'] } } }], network: { dnsEgress: 'DNS_EGRESS_MODE_DENY' } };
    const refused = resolveSandboxSpec({ policy: null, spec, capabilities: without('startupProbe', 'network.dnsEgress') });
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.violations.map((v) => [v.field, v.rule, v.requested])).toEqual([
      ['containers[0].startupProbe', 'runner_capability', 'startupProbe'],
      ['network.dnsEgress', 'runner_capability', 'network.dnsEgress'],
    ]);
    expect(refused.violations[0]?.description).toMatch(/^containers\[0\]\.startupProbe: the runner's backend does not honour startupProbe/);
    expect(resolveSandboxSpec({ policy: null, spec, capabilities: FULL_CAPABILITIES }).ok).toBe(true);
  });

  it('explain: a runner lacking a feature is skipped with the field named, one declaring it admits', () => {
    const spec = { containers: [{ name: 'app', image: 'python:3.12' }, { name: 'sidecar', image: 'python:3.12' }], primaryContainer: 'app' };
    const verdicts = explainPlacement(spec, [
      { runnerId: 'single', policy: null, capabilities: without('containers.multiple') },
      { runnerId: 'multi', policy: null, capabilities: FULL_CAPABILITIES },
    ]);
    expect(verdicts.map((v) => [v.runnerId, v.admitted, v.violations.map((x) => x.field)])).toEqual([
      ['single', false, ['containers[1]', 'primaryContainer']],
      ['multi', true, []],
    ]);
  });
});

describe('init containers', () => {
  it('refuses primary: true on an init container by name on every runner; primary: false asks for nothing', () => {
    const spec = (primary: boolean) => ({ containers: [{ command: ['sleep', '60'] }], initContainers: [{ name: 'setup', command: ['true'], primary }] });
    const refused = resolveSandboxSpec({ policy: null, spec: spec(true), capabilities: FULL_CAPABILITIES });
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.violations.map((v) => [v.field, v.rule])).toEqual([['initContainers[0].primary', 'invalid_value']]);
    const admitted = resolveSandboxSpec({ policy: null, spec: spec(false), capabilities: FULL_CAPABILITIES });
    expect(admitted.ok && admitted.resolved.primaryContainer).toBe('main');
  });
});

describe('what the runner policy adds, against the spec features', () => {
  it('refuses base attachments and a DNS egress mode the backend cannot apply, naming their place in the policy', () => {
    const policy = {
      base: { annotations: { 'team.io/owner': 'ml' }, labels: { tier: 'a' }, containers: [{ name: 'log-agent', image: 'agent:1' }], tolerations: [{ key: 'gpu', operator: 'Exists' }] },
      constraints: { network: { dnsEgress: 'DNS_EGRESS_MODE_DENY' as const } },
    };
    const spec = { containers: [{ image: 'python:3.12' }] };
    const refused = resolveSandboxSpec({ policy, spec, capabilities: { ...FULL_CAPABILITIES, specFeatures: [] } });
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.violations.map((v) => [v.field, v.rule, v.constraint])).toEqual([
      ['base.annotations', 'runner_capability', 'base.annotations'],
      ['base.containers', 'runner_capability', 'base.containers'],
      ['base.labels', 'runner_capability', 'base.labels'],
      ['base.podSpec', 'runner_capability', 'base'],
      ['network.dnsEgress', 'runner_capability', 'constraints.network.dnsEgress'],
    ]);
    expect(refused.violations.find((v) => v.field === 'base.podSpec')?.description).toContain('(tolerations)');
    expect(resolveSandboxSpec({ policy, spec, capabilities: FULL_CAPABILITIES }).ok).toBe(true);
  });

  it('a runner lacking one feature refuses exactly the uses of it that specFeatureUses lists', () => {
    // Resolution names a field only for a feature the runner lacks; every feature is taken away
    // in turn and the refusals compared with the full list of uses.
    const spec = {
      containers: [
        {
          name: 'app',
          securityContext: {
            runAsUser: 1000,
            runAsGroup: 1000,
            readOnlyRootFilesystem: false,
            capabilitiesDrop: ['ALL'],
          },
          volumeMounts: [{ volume: 'v', mountPath: '/v', readOnly: true, subPath: 'x' }],
          resourceRequirements: { limits: { gpu: { count: 0, memoryGb: 40 } } },
          imagePullCredentials: { registry: 'ghcr.io' },
        },
        { name: 'side', securityContext: { readOnlyRootFilesystem: true, seccompProfile: 'Unconfined' } },
      ],
      primaryContainer: 'app',
      volumes: [{ name: 'v', scratch: { size: '1Gi' } }],
      annotations: { 'acme.com/owner': 'ml' },
      instanceType: 'cpu-large',
      network: { dnsEgress: 'DNS_EGRESS_MODE_DENY' },
    };
    const uses = specFeatureUses(spec, 'app');
    expect(new Set(uses.map((u) => u.feature)).size).toBeGreaterThan(12);
    for (const feature of SPEC_FEATURES) {
      const r = resolveSandboxSpec({ policy: null, spec, capabilities: without(feature) });
      const refused = r.ok ? [] : r.violations.filter((v) => v.rule === 'runner_capability');
      const expected = uses.filter((u) => u.feature === feature).map((u) => u.field).sort();
      expect({ feature, fields: refused.map((v) => v.field).sort() }).toEqual({ feature, fields: expected });
      for (const v of refused) expect(v.requested).toBe(feature);
    }
  });
});

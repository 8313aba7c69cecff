import { Namespace } from 'kubernetes-models/v1/Namespace';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { buildRunnerObjects, type KubeObject } from '../src/builders/runner.manifests';
import { RunnerConfigFileSchema } from '@paddock/contracts';
import type { DesiredRunner } from '../src/desired';

const desired = (over: Partial<DesiredRunner> = {}): DesiredRunner => ({
  uid: '6f1c0c4e-0000-4000-8000-000000000001',
  organizationId: 'org-1',
  runnerId: 'prod-us-east-1',
  clusterId: 'c-1',
  zone: 'us-east-1',
  runnerGroupId: 'default',
  deleting: false,
  targetRevision: 2,
  targetImage: 'paddock/runner:0.2.0',
  policy: { displayName: 'default', constraints: { resources: { maxCpu: '4' } } },
  policyEtag: 'p1',
  deploymentSpec: {
    image: 'paddock/runner:0.2.0',
    imagePullPolicy: 'IfNotPresent',
    gatewayServer: 'nats://nats:4222',
    serviceAccount: 'runner',
    resources: { cpuRequest: '1', memoryRequest: '2Gi', cpuLimit: '4', memoryLimit: '8Gi' },
    initResources: { cpuRequest: '50m', memoryRequest: '64Mi' },
    scaling: { replicas: 1 },
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'system', effect: 'NoSchedule' }],
    nodeSelector: { 'node-pool': 'system' },
    affinity: JSON.stringify({ nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, preference: { matchExpressions: [{ key: 'example.com/capacity-class', operator: 'In', values: ['on-demand'] }] } }] } }),
    labels: { team: 'ml' },
    annotations: {},
    env: { LOG_LEVEL: 'info' },
    args: ['--verbose'],
    cpuRuntimeClass: '',
    gpuRuntimeClass: '',
  },
  ...over,
});

type PodSpecLoose = { nodeSelector: unknown; tolerations: { key: string }[]; affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: { weight: number }[] } }; containers: { resources: unknown; env: unknown[]; image: string }[] };

function validate(o: KubeObject): void {
  const ctor: Record<string, new (x: never) => { validate(): void }> = {
    Namespace: Namespace,
    ServiceAccount: ServiceAccount,
    ConfigMap: ConfigMap,
    Deployment: Deployment,
    Role: Role,
    RoleBinding: RoleBinding,
  };
  const C = ctor[o.kind];
  if (!C) throw new Error(`no schema for ${o.kind}`);
  new C(o as never).validate();
}

describe('runner manifest builders', () => {
  it('emits schema-valid objects, deterministic for the same input', () => {
    const a = buildRunnerObjects(desired(), { natsUrl: 'nats://nats:4222' });
    const b = buildRunnerObjects(desired(), { natsUrl: 'nats://nats:4222' });
    expect(a).toEqual(b);
    expect(a.map((o) => o.kind)).toEqual(['Namespace', 'Namespace', 'ServiceAccount', 'RoleBinding', 'ConfigMap', 'Deployment']);
    for (const o of a) expect(() => validate(o)).not.toThrow();
  });

  it('labels the sandbox namespace for Pod Security restricted', () => {
    const sb = buildRunnerObjects(desired(), { natsUrl: 'n' })[1];
    expect(sb?.metadata.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
  });

  it('carries overrides (node selector, tolerations, affinity JSON, resources, env, args) into the Deployment', () => {
    const dep = buildRunnerObjects(desired(), { natsUrl: 'n' }).find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { metadata: { annotations: Record<string, string> }; spec: PodSpecLoose } } };
    const pod = dep.spec.template.spec;
    expect(pod.nodeSelector).toEqual({ 'node-pool': 'system' });
    expect(pod.tolerations[0]).toMatchObject({ key: 'dedicated', effect: 'NoSchedule' });
    expect(pod.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]?.weight).toBe(100);
    const c0 = pod.containers[0];
    expect(c0?.resources).toEqual({ requests: { cpu: '1', memory: '2Gi' }, limits: { cpu: '4', memory: '8Gi' } });
    expect(c0?.env).toContainEqual({ name: 'LOG_LEVEL', value: 'info' });
    expect(c0?.image).toBe('paddock/runner:0.2.0');
    expect(dep.spec.template.metadata.annotations['paddock.dev/revision']).toBe('2');
  });

  it('env names are unique (an apply with duplicate keys is refused); platform variables come first and win over overrides', () => {
    const d = desired();
    // The control plane's deploymentSpec.env already carries the identity variables; a user
    // override of a platform name must not survive either.
    const spec = { ...d.deploymentSpec, env: { ...d.deploymentSpec.env, PADDOCK_RUNNER_ID: d.runnerId, NATS_URL: 'nats://elsewhere:4222', A_FIRST: '1' } };
    const dep = buildRunnerObjects({ ...d, deploymentSpec: spec }, { natsUrl: 'n' }).find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: { containers: { env: { name: string; value: string }[] }[] } } } };
    const env = dep.spec.template.spec.containers[0]?.env ?? [];
    const names = env.map((e) => e.name);
    expect(new Set(names).size).toBe(names.length);
    expect(env.find((e) => e.name === 'NATS_URL')?.value).toBe('n');
    expect(names.slice(-2)).toEqual(['A_FIRST', 'LOG_LEVEL']);
    expect(names[0]).toBe('PADDOCK_RUNNER_ID');
  });

  it('a policy edit changes only the ConfigMap, never the pod template (no runner restart)', () => {
    const before = buildRunnerObjects(desired(), { natsUrl: 'n' });
    const after = buildRunnerObjects(desired({ policy: { constraints: {} }, policyEtag: 'p2' }), { natsUrl: 'n' });
    const changed = before.filter((o, i) => JSON.stringify(o) !== JSON.stringify(after[i])).map((o) => o.kind);
    expect(changed).toEqual(['ConfigMap']);
  });

  it('the ConfigMap’s runner config file is what the runner reads: its schema parses it (unknown keys refused) with every identity field', () => {
    const cm = buildRunnerObjects(desired(), { natsUrl: 'n' }).find((o) => o.kind === 'ConfigMap') as unknown as { data: Record<string, string> };
    const [text] = Object.values(cm.data);
    const file = RunnerConfigFileSchema.parse(JSON.parse(text ?? ''));
    expect(file).toEqual({
      runnerId: 'prod-us-east-1',
      revision: 2,
      policy: { displayName: 'default', constraints: { resources: { maxCpu: '4' } } },
      policyEtag: 'p1',
      identity: { organizationId: 'org-1', clusterId: 'c-1', zone: 'us-east-1', runnerGroupId: 'default' },
      nats: {},
    });
  });

  it('carries the warm pools into the runner config file, and a pool edit changes only the ConfigMap', () => {
    const warmPools = [{ name: 'agents', size: 5, template: { containers: [{ name: 'main', resources: { cpu: '100m', memory: '128Mi' } }] } }];
    const before = buildRunnerObjects(desired(), { natsUrl: 'n' });
    const after = buildRunnerObjects(desired({ warmPools }), { natsUrl: 'n' });
    expect(before.filter((o, i) => JSON.stringify(o) !== JSON.stringify(after[i])).map((o) => o.kind)).toEqual(['ConfigMap']);
    const cm = after.find((o) => o.kind === 'ConfigMap') as unknown as { data: Record<string, string> };
    const file = RunnerConfigFileSchema.parse(JSON.parse(Object.values(cm.data)[0] ?? ''));
    expect(file.warmPools).toEqual(warmPools);
  });
});

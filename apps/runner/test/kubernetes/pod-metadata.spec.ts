import * as k8s from '@kubernetes/client-node';
import { PaddockError, SandboxSpecSchema, type Policy } from '@paddock/contracts';
import { checkPodSecurityRestricted, validateManifest, type K8sTestServer, type PodSpec } from '@paddock/k8s-testserver';
import { resolveSandboxSpec } from '@paddock/policy';
import { waitFor } from '@paddock/testing';
import { buildSandboxPod, KubernetesBackend, podNameFor } from '../../src/backend/kubernetes';
import { GPU_MEMORY_LABEL } from '../../src/backend/kubernetes/gpu-affinity';
import { podLaunchViolations } from '../../src/backend/kubernetes/launch-violations';
import { PLATFORM_KEY_PREFIX } from '../../src/backend/kubernetes/pod-metadata';
import { secretEnvSecretNameFor } from '../../src/backend/kubernetes/secret-env';
import type { LaunchBase, LaunchSpec } from '../../src/backend/sandbox-backend';
import { effectiveFieldsOf, toLaunchSpec } from '../../src/service/launch-spec';
import { createRestrictedNamespace, launchSpec, runnerKubeConfig, startRunnerK8sServer } from './support';

const NS = 'paddock-sandboxes-meta';
const OPTS = { namespace: NS, gpuTypes: ['H100'] };
const base = (over: Partial<LaunchBase>): LaunchBase => ({ annotations: {}, labels: {}, containers: [], podSpec: {}, ...over });
const fieldsOf = (spec: LaunchSpec): string[] => podLaunchViolations(spec, OPTS).map((v) => v.field);

function valid(pod: k8s.V1Pod): void {
  expect(validateManifest(pod)).toEqual([]);
  expect(checkPodSecurityRestricted(pod.spec as unknown as PodSpec)).toEqual([]);
}

describe('Kubernetes pod metadata: annotations and the runner policy base', () => {
  it('puts the resolved annotations and the base labels on the pod, under the platform keys', () => {
    const spec = launchSpec({ sandboxId: 'sb-meta', annotations: { team: 'ml', 'example.com/owner': 'ops' }, base: base({ annotations: { 'example.com/owner': 'ops' }, labels: { tier: 'gold' } }) });
    expect(fieldsOf(spec)).toEqual([]);
    const pod = buildSandboxPod(spec, OPTS);
    expect(pod.metadata?.annotations).toMatchObject({ team: 'ml', 'example.com/owner': 'ops', 'paddock.dev/sandbox-id': 'sb-meta' });
    expect(pod.metadata?.labels).toMatchObject({ tier: 'gold', 'paddock.dev/sandbox-id': 'sb-meta' });
    // Every key the platform itself sets is under the one prefix no launch key may use.
    const own = buildSandboxPod(launchSpec({ sandboxId: 'sb-plain', files: [{ path: 'a', content: Buffer.from('a') }] }), OPTS);
    for (const k of [...Object.keys(own.metadata?.labels ?? {}), ...Object.keys(own.metadata?.annotations ?? {})]) expect(k.startsWith(PLATFORM_KEY_PREFIX)).toBe(true);
    valid(pod);
  });

  it('refuses platform, runtime and Kubernetes keys by name, from the sandbox and from the base', () => {
    const spec = launchSpec({
      sandboxId: 'sb-keys',
      annotations: {
        'paddock.dev/launch-files': 'written',
        'io.katacontainers.config.hypervisor.kernel_params': 'x',
        'kubectl.kubernetes.io/default-container': 'x',
        'bad key': 'x',
        'example.kubernetes.io/pinned': 'x',
      },
      base: base({ annotations: { 'example.kubernetes.io/pinned': 'x' }, labels: { 'paddock.dev/runner-id': 'other', tier: 'not a value' } }),
    });
    expect(podLaunchViolations(spec, OPTS).map((v) => [v.field, v.rule])).toEqual([
      ['annotations["paddock.dev/launch-files"]', 'platform_key'],
      ['annotations["io.katacontainers.config.hypervisor.kernel_params"]', 'privileged_annotation'],
      ['annotations["kubectl.kubernetes.io/default-container"]', 'reserved_annotation'],
      ['annotations["bad key"]', 'qualified_name'],
      ['base.labels["paddock.dev/runner-id"]', 'platform_key'],
      ['base.labels["tier"]', 'label_value'],
    ]);
  });

  it('refuses a paddock.dev/ annotation by name even when an admin policy no longer denies the prefix', () => {
    const request = { containers: [{ command: ['sleep', '1'] }], annotations: { 'paddock.dev/sandbox-id': 'someone-else' } };
    const kubeConfig = new k8s.KubeConfig();
    kubeConfig.loadFromClusterAndUser({ name: 'unused', server: 'https://127.0.0.1:1', skipTLSVerify: true }, { name: 'unused' });
    const caps = new KubernetesBackend({ runnerId: 'r', namespace: NS, kubeConfig }).capabilities();
    // The platform default denies the prefix; a policy of the runner's own replaces it and need not.
    const byDefault = resolveSandboxSpec({ policy: null, spec: request, capabilities: caps });
    expect(byDefault.ok ? [] : byDefault.violations.map((v) => v.rule)).toEqual(['denied_annotation_prefix']);
    const admin: Policy = { constraints: { metadata: { maxAnnotationCount: 4 } } };
    const res = resolveSandboxSpec({ policy: admin, spec: request, capabilities: caps });
    if (!res.ok) throw new Error('admitted by the admin policy');
    const parsed = SandboxSpecSchema.parse(request);
    const meta = { v: 1 as const, organizationId: 'org-1', spec: parsed, labels: {}, effective: effectiveFieldsOf(res.resolved), requestFingerprint: 'f', createTime: '2026-01-01T00:00:00Z', cpuMillis: 0, memoryBytes: 0 };
    const launch = toLaunchSpec({ sandboxId: 'sb-admin', organizationId: 'org-1', runnerId: 'r', spec: parsed, resolved: res.resolved, caps: { pidsMax: 1, diskBytes: 1 << 20, openFilesMax: 64 }, meta });
    expect(fieldsOf(launch)).toEqual(['annotations["paddock.dev/sandbox-id"]']);
  });

  it('takes placement from a base and adds the GPU memory requirement to each of its node affinity terms', () => {
    const term = { matchExpressions: [{ key: 'pool', operator: 'In', values: ['a', 'b'] }] };
    const spec = launchSpec({
      sandboxId: 'sb-place',
      gpuCount: 1,
      gpuMemoryGb: 40,
      base: base({
        podSpec: {
          tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
          nodeSelector: { zone: 'z1' },
          affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term, { matchExpressions: [{ key: 'pool', operator: 'In', values: ['c'] }] }] } } },
          schedulerName: 'default-scheduler',
          priorityClassName: 'sandboxes',
        },
      }),
    });
    expect(fieldsOf(spec)).toEqual([]);
    const pod = buildSandboxPod(spec, OPTS);
    const gpu = { key: GPU_MEMORY_LABEL, operator: 'Gt', values: ['40959'] };
    expect(pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms).toEqual([
      { matchExpressions: [...term.matchExpressions, gpu] },
      { matchExpressions: [{ key: 'pool', operator: 'In', values: ['c'] }, gpu] },
    ]);
    expect(pod.spec).toMatchObject({ nodeSelector: { zone: 'z1' }, schedulerName: 'default-scheduler', priorityClassName: 'sandboxes', tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }] });
    expect(pod.spec?.containers[0]?.resources?.limits?.['nvidia.com/gpu']).toBe('1');
    valid(pod);
  });

  it('refuses every other base pod field by name, malformed placement by its path, and a node selector against the GPU model', () => {
    const spec = launchSpec({
      sandboxId: 'sb-unsafe',
      gpuCount: 1,
      gpuType: 'H100',
      base: base({
        containers: [{ name: 'log-agent', cpuMillis: 100, memoryBytes: 1 << 20 }],
        podSpec: {
          hostNetwork: true,
          volumes: [{ name: 'host', hostPath: { path: '/' } }],
          securityContext: { runAsUser: 0 },
          serviceAccountName: 'admin',
          tolerations: [{ key: 'x', operator: 'Sometimes' }],
          nodeSelector: { 'nvidia.com/gpu.product': 'A100' },
          dnsPolicy: 'Default',
        },
      }),
    });
    expect(fieldsOf(spec)).toEqual([
      'base.containers',
      'base.hostNetwork',
      'base.volumes',
      'base.securityContext',
      'base.serviceAccountName',
      'base.tolerations.0.operator',
      'base.nodeSelector["nvidia.com/gpu.product"]',
      'base.dnsPolicy',
    ]);
    // Nothing refused reaches the pod.
    const pod = buildSandboxPod(spec, OPTS);
    expect(pod.spec?.hostNetwork).toBeUndefined();
    expect(pod.spec?.nodeSelector).toEqual({ 'nvidia.com/gpu.product': 'H100' });
  });

  it('refuses a GPU memory without a GPU count', () => {
    expect(fieldsOf(launchSpec({ sandboxId: 'sb-mem', gpuMemoryGb: 24 }))).toEqual(['gpu.memoryGb']);
  });
});

describe('KubernetesBackend metadata, placement and secret env on a cluster', () => {
  let server: K8sTestServer;
  let backend: KubernetesBackend;
  let core: k8s.CoreV1Api;

  beforeAll(async () => {
    server = await startRunnerK8sServer({
      nodes: [
        { name: 'plain' },
        { name: 'gpu-40', labels: { [GPU_MEMORY_LABEL]: '40960' }, taints: [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }] },
        { name: 'gpu-80', labels: { [GPU_MEMORY_LABEL]: '81920' }, taints: [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }] },
      ],
    });
    await createRestrictedNamespace(server.kubeConfig(), NS);
    core = server.kubeConfig().makeApiClient(k8s.CoreV1Api);
    backend = new KubernetesBackend({ runnerId: 'runner-a', namespace: NS, kubeConfig: runnerKubeConfig(server, NS), maxGpuCount: 1 });
  });
  afterAll(async () => {
    await backend.close();
    await server.close();
  });

  it('schedules a GPU memory request on a node with that much, tolerated by the base', async () => {
    const spec = launchSpec({ sandboxId: 'sb-gpu-80', gpuCount: 1, gpuMemoryGb: 80, base: base({ podSpec: { tolerations: [{ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' }] } }) });
    await backend.launch(spec);
    const pod = await waitFor(async () => {
      const p = await core.readNamespacedPod({ namespace: NS, name: podNameFor('sb-gpu-80') });
      return p.spec?.nodeName ? p : undefined;
    }, { what: 'sb-gpu-80 scheduled' });
    expect(pod.spec?.nodeName).toBe('gpu-80');
    await backend.stop('sb-gpu-80', 0, 'STOPPED_BY_USER');
  });

  it('keeps secret values in a per-sandbox Secret the container reads through secretKeyRef, deleted on stop', async () => {
    const spec = launchSpec({ sandboxId: 'sb-secret', command: ['sh', '-c', 'echo "pw=$PASSWORD"'], env: { PLAIN: 'x', PASSWORD: 'hunter2' }, secretEnvNames: ['PASSWORD'] });
    await backend.launch(spec);
    const name = secretEnvSecretNameFor(podNameFor('sb-secret'));
    const secret = server.get('v1', 'Secret', name, NS) as k8s.V1Secret | undefined;
    expect(secret).toMatchObject({ type: 'Opaque', immutable: true, metadata: { labels: { 'paddock.dev/sandbox-id': 'sb-secret' } } });
    expect(Buffer.from(secret?.data?.PASSWORD ?? '', 'base64').toString('utf8')).toBe('hunter2');
    expect(validateManifest(secret)).toEqual([]);
    const pod = server.get('v1', 'Pod', podNameFor('sb-secret'), NS) as k8s.V1Pod;
    expect(pod.spec?.containers[0]?.env).toEqual([
      { name: 'PLAIN', value: 'x' },
      { name: 'PASSWORD', valueFrom: { secretKeyRef: { name, key: 'PASSWORD' } } },
    ]);
    expect(JSON.stringify(pod)).not.toContain('hunter2');
    await waitFor(async () => (await core.readNamespacedPodLog({ namespace: NS, name: podNameFor('sb-secret'), container: 'sandbox' })) === 'pw=hunter2\n', { what: 'the secret in the process env' });
    await backend.stop('sb-secret', 0, 'STOPPED_BY_USER');
    expect(server.get('v1', 'Secret', name, NS)).toBeUndefined();
  });

  it('refuses a launch whose secret value or annotation cannot go on the pod, creating nothing', async () => {
    const refused = await backend.launch(launchSpec({ sandboxId: 'sb-undelivered', secretEnvNames: ['TOKEN'], annotations: { 'paddock.dev/x': 'y' } })).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PaddockError);
    expect((refused as PaddockError).violations.map((v) => [v.field, v.rule])).toEqual([
      ['annotations["paddock.dev/x"]', 'platform_key'],
      ['secretStores', 'delivered'],
    ]);
    expect(server.get('v1', 'Pod', podNameFor('sb-undelivered'), NS)).toBeUndefined();
    expect(server.get('v1', 'Secret', secretEnvSecretNameFor(podNameFor('sb-undelivered')), NS)).toBeUndefined();
  });
});

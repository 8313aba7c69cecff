import * as k8s from '@kubernetes/client-node';
import {
  checkPodSecurityRestricted,
  startK8sTestServer,
  validateManifest,
  type K8sTestServer,
  type PodSpec,
} from '@paddock/k8s-testserver';
import fc from 'fast-check';
import { buildSandboxNetworkPolicy, buildSandboxPod, refusedGpuType, refusedRuntimeClass, runtimeClassFor, type SandboxPodOptions } from '../../src/backend/kubernetes';
import type { EgressCidrRule, LaunchContainer, LaunchProbe, LaunchSpec, LaunchVolume, LaunchVolumeMount } from '../../src/backend/sandbox-backend';
import { buildSandboxServices, relayPeerFor, SANDBOX_POD_LABEL, serviceNameFor } from '../../src/backend/kubernetes/services';
import { createRestrictedNamespace } from './support';

const RUNS = Number(process.env.PADDOCK_SOAK ? 50_000 : 5_000);
const PARTS_RUNS = Number(process.env.PADDOCK_SOAK ? 5_000 : 150);
const ADMISSION_SAMPLE = Number(process.env.PADDOCK_SOAK ? 2_000 : 200);
const SEED = 20261129;
const NS = 'paddock-sandboxes-fuzz';

/** Keys a hostile spec might use to smuggle pod fields through labels or env. */
const SMUGGLING_KEYS = ['runtimeClassName', 'nodeName', 'tolerations', 'hostUsers', 'hostNetwork', 'privileged', 'paddock.dev/runtime-class', 'spec.nodeName', 'securityContext'];
const key = fc.oneof(fc.constantFrom(...SMUGGLING_KEYS), fc.string({ minLength: 1, maxLength: 20 }));
const value = fc.oneof(fc.constantFrom('gvisor', 'kata', 'runc', 'true', 'node-1', '[{"operator":"Exists"}]', ''), fc.string({ maxLength: 30 }));
const id = fc.oneof(fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,60}$/), fc.string({ minLength: 1, maxLength: 80 }));

/** Resolved CIDR grants as the policy engine leaves them: canonical blocks, exceptions inside, valid ports. */
const egressCidrArb: fc.Arbitrary<EgressCidrRule> = fc.record({
  cidr: fc.constantFrom('10.0.0.0/8', '192.168.1.0/24', '203.0.113.7/32', '2001:db8::/32'),
  except: fc.constantFrom<string[]>([], ['10.1.0.0/16'], ['192.168.1.128/25']),
  ports: fc.array(
    fc.record({ protocol: fc.constantFrom('TCP' as const, 'UDP' as const, 'SCTP' as const), port: fc.integer({ min: 1, max: 60_000 }) }),
    { maxLength: 3 },
  ),
});

const launchSpecArb: fc.Arbitrary<LaunchSpec> = fc.record({
  sandboxId: id,
  organizationId: id,
  runnerId: fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,20}[a-z0-9]$/),
  image: fc.stringMatching(/^[a-z0-9]+(\/[a-z0-9._-]+){0,2}(:[a-z0-9.]{1,8})?$/),
  command: fc.array(fc.string({ maxLength: 20 }), { maxLength: 4 }),
  env: fc.dictionary(key, value, { maxKeys: 6 }),
  workingDir: fc.option(fc.constantFrom('/workspace', '/tmp', '/workspace/src'), { nil: undefined }),
  cpuMillis: fc.integer({ min: 0, max: 64_000 }),
  memoryBytes: fc.integer({ min: 0, max: 256 * 2 ** 30 }),
  pidsMax: fc.integer({ min: 1, max: 100_000 }),
  diskBytes: fc.integer({ min: 1, max: 2 ** 40 }),
  openFilesMax: fc.integer({ min: 1, max: 1 << 20 }),
  lifetimeSeconds: fc.integer({ min: 1, max: 7 * 86_400 }),
  network: fc.constantFrom('none' as const, 'host' as const),
  egressCidrs: fc.option(fc.array(egressCidrArb, { maxLength: 4 }), { nil: undefined }),
  // Classes the test cluster has: admission refuses a pod naming a RuntimeClass that does not exist.
  runtimeClassName: fc.option(fc.constantFrom('gvisor', 'kata'), { nil: undefined }),
  gpuCount: fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }),
  gpuType: fc.option(fc.constantFrom('H100', 'A100', 'L40S'), { nil: undefined }),
  // A file with a command puts the main container behind the launch gate.
  files: fc.oneof(fc.constant<LaunchSpec['files']>([]), fc.constant<LaunchSpec['files']>([{ path: 'in/data.txt', content: Buffer.from('x') }])),
  labels: fc.dictionary(key, value, { maxKeys: 6 }),
  // Public service ports as the runner passes them on (distinct), the edges of the range included.
  servicePorts: fc.option(fc.uniqueArray(fc.oneof(fc.constantFrom(1, 80, 8000, 65_535), fc.integer({ min: 1, max: 65_535 })), { minLength: 1, maxLength: 4 }), { nil: undefined }),
}).map((s) => {
  if (s.servicePorts === undefined) delete s.servicePorts;
  if (s.workingDir === undefined) delete s.workingDir;
  if (s.egressCidrs === undefined) delete s.egressCidrs;
  if (s.runtimeClassName === undefined) delete s.runtimeClassName;
  if (s.gpuCount === undefined) delete s.gpuCount;
  if (s.gpuType === undefined || s.gpuCount === undefined) delete s.gpuType;
  return s;
});

/** Pod parts as the runner passes them on: distinct DNS-label names, mounts of declared volumes at distinct paths. */
const volumesArb = fc.uniqueArray(
  fc.record({ name: fc.stringMatching(/^[a-z][a-z0-9-]{0,10}[a-z0-9]$/), medium: fc.constantFrom('disk' as const, 'memory' as const), sizeBytes: fc.integer({ min: 1, max: 2 ** 36 }) }),
  { selector: (v) => v.name, maxLength: 3 },
);
const mountsArb = (volumes: readonly LaunchVolume[]): fc.Arbitrary<LaunchVolumeMount[]> =>
  volumes.length === 0
    ? fc.constant([])
    : fc.uniqueArray(
        fc.record({
          volume: fc.constantFrom(...volumes.map((v) => v.name)),
          mountPath: fc.stringMatching(/^\/mnt\/[a-z]{1,6}$/),
          readOnly: fc.boolean(),
          subPath: fc.option(fc.stringMatching(/^[a-z]{1,6}(\/[a-z]{1,6})?$/), { nil: undefined }),
        }),
        { selector: (m) => m.mountPath, maxLength: 3 },
      ).map((ms) => ms.map(({ subPath, ...m }) => (subPath === undefined ? m : { ...m, subPath })));
const containersArb = (volumes: readonly LaunchVolume[], prefix: string): fc.Arbitrary<LaunchContainer[]> =>
  fc.uniqueArray(
    fc.record({
      name: fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/).map((n) => `${prefix}${n}`),
      image: fc.constantFrom('paddock/base:1', 'busybox'),
      command: fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }),
      env: fc.dictionary(key, value, { maxKeys: 3 }),
      files: fc.constant([]),
      volumeMounts: mountsArb(volumes),
    }),
    { selector: (c) => c.name, maxLength: 2 },
  );
const probeArb: fc.Arbitrary<LaunchProbe> = fc.record({
  exec: fc.array(fc.string({ minLength: 1, maxLength: 10 }), { minLength: 1, maxLength: 3 }),
  periodSeconds: fc.double({ min: 0.1, max: 3600, noNaN: true }),
  timeoutSeconds: fc.double({ min: 0.1, max: 3600, noNaN: true }),
  failureThreshold: fc.integer({ min: 1, max: 10_000 }),
  initialDelaySeconds: fc.double({ min: 0, max: 3600, noNaN: true }),
});
const withPodPartsArb: fc.Arbitrary<LaunchSpec> = launchSpecArb.chain((spec) =>
  volumesArb.chain((volumes) =>
    fc.record({ sidecars: containersArb(volumes, 's'), initContainers: containersArb(volumes, 'i'), volumeMounts: mountsArb(volumes), startupProbe: fc.option(probeArb, { nil: undefined }) }).map((parts) => {
      const out: LaunchSpec = { ...spec };
      if (volumes.length) out.volumes = volumes;
      if (parts.volumeMounts.length) out.volumeMounts = parts.volumeMounts;
      if (parts.sidecars.length) out.sidecars = parts.sidecars;
      if (parts.initContainers.length) out.initContainers = parts.initContainers;
      if (parts.startupProbe) out.startupProbe = parts.startupProbe;
      return out;
    }),
  ),
);

const RELAY = relayPeerFor('runner-a', 'paddock-runner-runner-a', 'runner-a');
const OPTION_SETS: SandboxPodOptions[] = [
  { namespace: NS, runtimeClassName: 'gvisor', allowedRuntimeClasses: ['kata'], serviceRelay: RELAY },
  { namespace: NS, allowedRuntimeClasses: ['gvisor', 'kata'] },
  { namespace: NS },
];

const servicesOf = (spec: LaunchSpec, pod: k8s.V1Pod): k8s.V1Service[] =>
  buildSandboxServices(spec, { name: pod.metadata!.name!, namespace: NS, labels: pod.metadata!.labels!, uid: 'a-pod-uid' });

/** One Service's shape: a DNS-1035 name for its port, ClusterIP only, selecting exactly its pod, owned by it. */
function serviceShapeProblems(svc: k8s.V1Service, spec: LaunchSpec, pod: k8s.V1Pod, port: number): string[] {
  const problems: string[] = [];
  const name = svc.metadata?.name ?? '';
  // DNS-1035: the Service's name is also its DNS label.
  if (!/^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/.test(name) || name !== serviceNameFor(pod.metadata!.name!, port)) problems.push(`service name ${name}`);
  if (svc.spec?.type !== 'ClusterIP' || svc.spec.externalIPs || svc.spec.externalName || svc.spec.loadBalancerIP) problems.push(`service ${name} is exposed beyond the cluster`);
  if (JSON.stringify(svc.spec?.selector) !== JSON.stringify({ [SANDBOX_POD_LABEL]: pod.metadata!.name })) problems.push(`service ${name} selector ${JSON.stringify(svc.spec?.selector)}`);
  if (pod.metadata?.labels?.[SANDBOX_POD_LABEL] !== pod.metadata?.name) problems.push('pod lacks its own name label');
  if (svc.metadata?.ownerReferences?.[0]?.name !== pod.metadata?.name || svc.metadata?.ownerReferences?.[0]?.kind !== 'Pod') problems.push(`service ${name} not owned by its pod`);
  if (!(spec.servicePorts ?? []).includes(port)) problems.push(`service ${name} for a port the launch does not serve`);
  return problems;
}

/** What is wrong with the Services of a launch: schema, names, and anything beyond one ClusterIP port selecting this pod. */
function serviceProblemsOf(spec: LaunchSpec, pod: k8s.V1Pod): string[] {
  const services = servicesOf(spec, pod);
  const problems = services.flatMap((svc) => validateManifest(svc));
  const ports = [...new Set(spec.servicePorts ?? [])];
  if (JSON.stringify(services.map((svc) => svc.spec?.ports?.map((p) => [p.port, p.targetPort, p.protocol]))) !== JSON.stringify(ports.map((p) => [[p, p, 'TCP']]))) {
    problems.push(`service ports ${JSON.stringify(services.map((svc) => svc.spec?.ports))} != ${JSON.stringify(ports)}`);
  }
  for (const [i, svc] of services.entries()) problems.push(...serviceShapeProblems(svc, spec, pod, ports[i]!));
  return problems;
}

function problemsOf(spec: LaunchSpec, opts: SandboxPodOptions): string[] {
  const pod = buildSandboxPod(spec, opts);
  const s = pod.spec!;
  const problems = [
    ...checkPodSecurityRestricted(s as unknown as PodSpec),
    ...validateManifest(pod),
    ...validateManifest(buildSandboxNetworkPolicy(spec, opts)),
    ...serviceProblemsOf(spec, pod),
  ];
  if (s.automountServiceAccountToken !== false) problems.push('automountServiceAccountToken not false');
  if (s.hostNetwork || s.hostPID || s.hostIPC) problems.push('host namespace');
  if ((s.volumes ?? []).some((v) => v.hostPath)) problems.push('hostPath volume');
  if ([...s.containers, ...(s.initContainers ?? [])].some((c) => c.securityContext?.privileged)) problems.push('privileged');
  if (s.ephemeralContainers) problems.push('ephemeral containers');
  // Exactly the containers the launch asked for, and a GPU on the sandbox container alone.
  if (s.containers.length !== 1 + (spec.sidecars?.length ?? 0) || (s.initContainers?.length ?? 0) !== (spec.initContainers?.length ?? 0)) problems.push('extra containers');
  if (s.containers.slice(1).some((c) => c.resources?.limits?.['nvidia.com/gpu'] !== undefined)) problems.push('GPU on a sidecar');
  // The one node selection a pod may carry is the GPU model its launch asked for.
  const gpuSelector = spec.gpuCount && spec.gpuType !== undefined ? { 'nvidia.com/gpu.product': spec.gpuType } : undefined;
  if (s.nodeName !== undefined || s.tolerations !== undefined || JSON.stringify(s.nodeSelector) !== JSON.stringify(gpuSelector) || s.affinity !== undefined) {
    problems.push('node selection set');
  }
  if (s.hostUsers !== false) problems.push('hostUsers not false');
  // The platform pin, else the resolved class: never dropped (a refused one never reaches the pod).
  const expectedClass = opts.runtimeClassName ?? spec.runtimeClassName;
  if (s.runtimeClassName !== expectedClass) problems.push(`runtimeClassName ${s.runtimeClassName} != ${expectedClass}`);
  if (s.restartPolicy !== 'Never' || s.activeDeadlineSeconds !== spec.lifetimeSeconds) problems.push('restartPolicy/deadline');
  const main = s.containers[0]!.resources!;
  if (main.limits?.['nvidia.com/gpu'] !== (spec.gpuCount ? String(spec.gpuCount) : undefined) || main.requests?.['nvidia.com/gpu'] !== main.limits?.['nvidia.com/gpu']) {
    problems.push(`gpu limit ${String(main.limits?.['nvidia.com/gpu'])} != ${String(spec.gpuCount)}`);
  }
  // Egress is exactly what was resolved: all of it for host, else one ipBlock rule per grant.
  const egress = buildSandboxNetworkPolicy(spec, opts).spec?.egress ?? [];
  const expectedEgress = spec.network === 'host' ? [{}] : (spec.egressCidrs ?? []).map((r) => r.cidr);
  const gotEgress = spec.network === 'host' ? egress : egress.map((e) => e.to?.[0]?.ipBlock?.cidr);
  if (JSON.stringify(gotEgress) !== JSON.stringify(expectedEgress)) problems.push(`egress ${JSON.stringify(gotEgress)} != ${JSON.stringify(expectedEgress)}`);
  // Ingress: nothing, but the relay (when the runner names one) on the public service ports.
  const ingress = buildSandboxNetworkPolicy(spec, opts).spec?.ingress ?? [];
  const servedPorts = [...new Set(spec.servicePorts ?? [])];
  const expectedIngress = opts.serviceRelay && servedPorts.length ? [{ _from: [opts.serviceRelay], ports: servedPorts.map((port) => ({ protocol: 'TCP', port })) }] : [];
  if (JSON.stringify(ingress) !== JSON.stringify(expectedIngress)) problems.push(`ingress ${JSON.stringify(ingress)} != ${JSON.stringify(expectedIngress)}`);
  return problems;
}

describe('buildSandboxPod conformance (SB-11, SB-12)', () => {
  it(`every generated pod passes PSS restricted and schema validation and pins the runtime class (${RUNS} specs × ${OPTION_SETS.length} option sets)`, () => {
    let checked = 0;
    fc.assert(
      fc.property(launchSpecArb, (spec) => {
        for (const opts of OPTION_SETS) {
          expect(problemsOf(spec, opts)).toEqual([]);
          checked++;
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
    expect(checked).toBe(RUNS * OPTION_SETS.length);
  });

  // Fewer runs: a pod with sidecars, init containers and volumes takes several times as long to validate.
  it(`so does every pod with sidecars, init containers, scratch volumes, mounts and a startup probe (${PARTS_RUNS} specs × ${OPTION_SETS.length} option sets)`, () => {
    let checked = 0;
    fc.assert(
      fc.property(withPodPartsArb, (spec) => {
        for (const opts of OPTION_SETS) {
          expect(problemsOf(spec, opts)).toEqual([]);
          checked++;
        }
      }),
      { seed: SEED + 2, numRuns: PARTS_RUNS },
    );
    expect(checked).toBe(PARTS_RUNS * OPTION_SETS.length);
  });

  it('the gates are live: a pod missing a restricted setting or a RuntimeClass pin is caught', () => {
    const spec = fc.sample(launchSpecArb, { seed: SEED, numRuns: 1 })[0]!;
    const pod = buildSandboxPod(spec, OPTION_SETS[0]!);
    const weakened = structuredClone(pod);
    delete weakened.spec!.containers[0]!.securityContext!.allowPrivilegeEscalation;
    expect(checkPodSecurityRestricted(weakened.spec as unknown as PodSpec).join('\n')).toMatch(/allowPrivilegeEscalation/);
    expect(problemsOf({ ...spec, runtimeClassName: 'kata' }, OPTION_SETS[1]!)).toEqual([]);
    // A Service exposed beyond the cluster, or selecting more than this pod, is caught too.
    const served: LaunchSpec = { ...spec, servicePorts: [8000] };
    const servedPod = buildSandboxPod(served, OPTION_SETS[0]!);
    const svc = servicesOf(served, servedPod)[0]!;
    expect(serviceProblemsOf(served, servedPod)).toEqual([]);
    const exposed = { ...svc, spec: { ...svc.spec, type: 'NodePort' } };
    const wide = { ...svc, spec: { ...svc.spec, selector: { 'paddock.dev/runner-id': 'runner-a' } } };
    expect(serviceShapeProblems(exposed, served, servedPod, 8000).join('\n')).toMatch(/exposed beyond the cluster/);
    expect(serviceShapeProblems(wide, served, servedPod, 8000).join('\n')).toMatch(/selector/);
  });

  it('applies the resolved runtime class, lets the platform pin win, and refuses one the runner does not offer', () => {
    const base: LaunchSpec = fc.sample(launchSpecArb, { seed: SEED, numRuns: 1 })[0]!;
    // Labels and env are data, never a channel to the pod spec.
    const spec: LaunchSpec = { ...base, runtimeClassName: 'kata', labels: { 'paddock.dev/runtime-class': 'runc' }, env: { runtimeClassName: 'runc', nodeName: 'node-1' } };
    expect(buildSandboxPod(spec, { namespace: NS, allowedRuntimeClasses: ['gvisor', 'kata'] }).spec?.runtimeClassName).toBe('kata');
    expect(buildSandboxPod(spec, { namespace: NS }).spec?.runtimeClassName).toBe('kata');
    expect(refusedRuntimeClass(spec, { namespace: NS, allowedRuntimeClasses: ['gvisor', 'kata'] })).toBeUndefined();
    expect(refusedRuntimeClass(spec, { namespace: NS, allowedRuntimeClasses: ['gvisor'] })).toBe('runtime class kata is not offered by this runner (offers gvisor)');
    expect(refusedRuntimeClass(spec, { namespace: NS, runtimeClassName: 'gvisor' })).toBe('runtime class kata was resolved, but this runner pins every sandbox to gvisor');
    const { runtimeClassName: _none, ...unresolved } = spec;
    expect(runtimeClassFor(unresolved, { namespace: NS, runtimeClassName: 'gvisor' })).toBe('gvisor');
    expect(buildSandboxPod(unresolved, { namespace: NS, runtimeClassName: 'gvisor' }).spec).toMatchObject({ runtimeClassName: 'gvisor', hostUsers: false });
    expect(buildSandboxPod(unresolved, { namespace: NS }).spec?.runtimeClassName).toBeUndefined();
    expect(buildSandboxPod(spec, { namespace: NS, runtimeClassName: 'gvisor' }).spec?.nodeName).toBeUndefined();
    expect(buildSandboxPod(spec, { namespace: NS, userNamespaces: false }).spec?.hostUsers).toBeUndefined();
  });

  it('asks the scheduler for the sandbox\'s requests and caps it at its limits', () => {
    const base: LaunchSpec = fc.sample(launchSpecArb, { seed: SEED, numRuns: 1 })[0]!;
    const burstable: LaunchSpec = { ...base, cpuMillis: 1000, memoryBytes: 256 * 1024 ** 2, cpuRequestMillis: 10, memoryRequestBytes: 32 * 1024 ** 2 };
    expect(buildSandboxPod(burstable, { namespace: NS }).spec?.containers[0]?.resources).toMatchObject({
      limits: { cpu: '1000m', memory: String(256 * 1024 ** 2) },
      requests: { cpu: '10m', memory: String(32 * 1024 ** 2) },
    });
    const { cpuRequestMillis: _c, memoryRequestBytes: _m, ...guaranteed } = burstable;
    expect(buildSandboxPod(guaranteed, { namespace: NS }).spec?.containers[0]?.resources?.requests).toMatchObject({ cpu: '1000m', memory: String(256 * 1024 ** 2) });
    expect(problemsOf(burstable, OPTION_SETS[2]!)).toEqual([]);
  });

  it('selects the GPU model by node label only among the offered ones, and refuses any other instead of ignoring it', () => {
    const base: LaunchSpec = fc.sample(launchSpecArb, { seed: SEED, numRuns: 1 })[0]!;
    const h100: LaunchSpec = { ...base, gpuCount: 2, gpuType: 'H100' };
    const opts: SandboxPodOptions = { namespace: NS, gpuTypes: ['H100', 'A100'], gpuTypeLabel: 'gpu.example/model', gpuResource: 'example.com/gpu' };
    expect(refusedGpuType(h100, opts)).toBeUndefined();
    const pod = buildSandboxPod(h100, opts).spec!;
    expect(pod.nodeSelector).toEqual({ 'gpu.example/model': 'H100' });
    expect(pod.containers[0]?.resources).toMatchObject({ limits: { 'example.com/gpu': '2' }, requests: { 'example.com/gpu': '2' } });
    expect(refusedGpuType({ ...h100, gpuType: 'L40S' }, opts)).toBe('GPU type L40S is not offered by this runner (offers H100, A100)');
    expect(refusedGpuType(h100, { namespace: NS })).toBe('GPU type H100 was asked for, but this runner does not select GPU models; omit the type or pick another runner');
    // Any model: no selector, nothing to refuse.
    const { gpuType: _model, ...anyModel } = h100;
    expect(refusedGpuType(anyModel, { namespace: NS })).toBeUndefined();
    expect(buildSandboxPod(anyModel, opts).spec?.nodeSelector).toBeUndefined();
  });

  describe('admission by a namespace enforcing restricted', () => {
    let server: K8sTestServer;
    beforeAll(async () => {
      // No kubelet: random commands must never be run as host processes.
      server = await startK8sTestServer({ kubelet: { enabled: false }, scheduler: false });
      await createRestrictedNamespace(server.kubeConfig(), NS);
      for (const name of ['gvisor', 'kata']) server.create({ apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name }, handler: name });
    });
    afterAll(async () => server.close());

    it(`admits a sample of ${ADMISSION_SAMPLE} generated pods with zero rejections`, async () => {
      const core = server.kubeConfig().makeApiClient(k8s.CoreV1Api);
      const net = server.kubeConfig().makeApiClient(k8s.NetworkingV1Api);
      const specs = fc.sample(withPodPartsArb, { seed: SEED + 1, numRuns: ADMISSION_SAMPLE });
      const rejections: string[] = [];
      const seen = new Set<string>();
      let services = 0;
      for (const [i, spec] of specs.entries()) {
        const opts = OPTION_SETS[i % OPTION_SETS.length]!;
        const pod = buildSandboxPod(spec, opts);
        if (seen.has(pod.metadata!.name!)) continue;
        seen.add(pod.metadata!.name!);
        try {
          await net.createNamespacedNetworkPolicy({ namespace: NS, body: buildSandboxNetworkPolicy(spec, opts) });
          const created = await core.createNamespacedPod({ namespace: NS, body: pod });
          for (const svc of buildSandboxServices(spec, { name: pod.metadata!.name!, namespace: NS, labels: pod.metadata!.labels!, uid: created.metadata!.uid! })) {
            await core.createNamespacedService({ namespace: NS, body: svc });
            services++;
          }
        } catch (e) {
          rejections.push(e instanceof Error ? e.message : String(e));
        }
      }
      expect(rejections).toEqual([]);
      // Control: the namespace really enforces restricted.
      const privileged = buildSandboxPod({ ...specs[0]!, sandboxId: 'control-privileged' }, OPTION_SETS[2]!);
      privileged.spec!.containers[0]!.securityContext!.privileged = true;
      const refusal = await core.createNamespacedPod({ namespace: NS, body: privileged }).then(() => undefined, (e: unknown) => e);
      expect(refusal).toBeInstanceOf(k8s.ApiException);
      expect((refusal as k8s.ApiException<unknown>).code).toBe(403);
      expect(String((refusal as k8s.ApiException<unknown>).body)).toMatch(/violates PodSecurity .*privileged/);
      const pods = server.list('v1', 'Pod', NS);
      expect(pods).toHaveLength(seen.size);
      // The sample does exercise Services, and every one admitted was stored.
      expect(services).toBeGreaterThan(0);
      expect(server.list('v1', 'Service', NS)).toHaveLength(services);
      expect(pods.every((p) => (p.spec as { automountServiceAccountToken?: boolean }).automountServiceAccountToken === false)).toBe(true);
    });
  });
});

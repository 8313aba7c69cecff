import * as k8s from '@kubernetes/client-node';
import { startK8sTestServer, checkPodSecurityRestricted, checkPodSecurity, type K8sTestServer, type PodSpec } from '../src';
import { statusOf } from './support';

const compliantContainer = (name: string): PodSpec['containers'][number] => ({
  name,
  image: 'busybox',
  securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
});
const compliant = (): PodSpec => ({ containers: [compliantContainer('main')], automountServiceAccountToken: false });

describe('checkPodSecurityRestricted', () => {
  it('admits a compliant spec and words violations like the PodSecurity admission plugin', () => {
    expect(checkPodSecurityRestricted(compliant())).toEqual([]);
    expect(checkPodSecurityRestricted({ containers: [{ name: 'c', image: 'x', securityContext: { privileged: true } }] })).toEqual([
      'privileged (container "c" must not set securityContext.privileged=true)',
      'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false)',
      'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"])',
      'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true)',
      'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    ]);
    const podLevel: PodSpec = {
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [{ name: 'a', image: 'x', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } } }],
    };
    expect(checkPodSecurityRestricted(podLevel)).toEqual([]);
    expect(checkPodSecurity({ containers: [{ name: 'a', image: 'x' }] }, 'baseline')).toEqual([]);
  });

  // Each mutation breaks exactly one rule; 5,000 random specs combine them over init, main and ephemeral containers.
  const mutations: [string, (s: PodSpec, c: PodSpec['containers'][number]) => void][] = [
    ['privileged', (_s, c) => void ((c.securityContext ??= {}).privileged = true)],
    ['allowPrivilegeEscalation != false', (_s, c) => void delete c.securityContext?.allowPrivilegeEscalation],
    ['unrestricted capabilities', (_s, c) => void ((c.securityContext ??= {}).capabilities = { drop: ['ALL'], add: ['SYS_PTRACE'] })],
    ['runAsNonRoot != true', (_s, c) => void ((c.securityContext ??= {}).runAsNonRoot = false)],
    ['runAsUser=0', (_s, c) => void ((c.securityContext ??= {}).runAsUser = 0)],
    ['seccompProfile', (_s, c) => void ((c.securityContext ??= {}).seccompProfile = { type: 'Unconfined' })],
    ['host namespaces', (s) => void (s.hostPID = true)],
    ['hostPath volumes', (s) => void (s.volumes = [{ name: 'h', hostPath: { path: '/' } }])],
    ['restricted volume types', (s) => void (s.volumes = [{ name: 'n', nfs: { server: 'x', path: '/' } }])],
    ['hostPort', (_s, c) => void (c.ports = [{ containerPort: 80, hostPort: 80 }])],
    ['procMount', (_s, c) => void ((c.securityContext ??= {}).procMount = 'Unmasked')],
    ['forbidden sysctls', (s) => void (s.securityContext = { sysctls: [{ name: 'kernel.msgmax', value: '1' }] })],
    ['seLinuxOptions', (_s, c) => void ((c.securityContext ??= {}).seLinuxOptions = { type: 'spc_t' })],
  ];

  it('flags every single-rule violation across 5,000 random specs and never flags the compliant ones', () => {
    let seed = 42;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    let flagged = 0;
    let admitted = 0;
    for (let i = 0; i < 5000; i++) {
      const spec = compliant();
      const where = rand(3);
      const target = compliantContainer(`c${i}`);
      if (where === 0) spec.initContainers = [target];
      else if (where === 1) spec.containers.push(target);
      else spec.ephemeralContainers = [target];
      if (rand(4) === 0) {
        expect(checkPodSecurityRestricted(spec)).toEqual([]);
        admitted++;
        continue;
      }
      const [rule, mutate] = mutations[rand(mutations.length)] as (typeof mutations)[number];
      mutate(spec, target);
      const violations = checkPodSecurityRestricted(spec);
      expect(violations.some((v) => v.startsWith(`${rule} (`))).toBe(true);
      flagged++;
    }
    expect(flagged + admitted).toBe(5000);
    expect(admitted).toBeGreaterThan(1000);
  });
});

describe('PodSecurity admission', () => {
  let server: K8sTestServer;
  beforeAll(async () => {
    server = await startK8sTestServer({ kubelet: { enabled: false } });
  });
  afterAll(async () => {
    await server.close();
  });

  it('rejects a privileged pod in an enforce=restricted namespace with the violations listed, and admits a compliant one', async () => {
    const core = server.kubeConfig().makeApiClient(k8s.CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'sandbox', labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } } });
    const rejected = await statusOf(core.createNamespacedPod({ namespace: 'sandbox', body: { metadata: { name: 'bad' }, spec: { containers: [{ name: 'c', image: 'x', securityContext: { privileged: true } }] } } }));
    expect(rejected).toMatchObject({ kind: 'Status', code: 403, reason: 'Forbidden', details: { name: 'bad', kind: 'pods' } });
    expect(rejected.message).toBe(
      'pods "bad" is forbidden: violates PodSecurity "restricted:latest": privileged (container "c" must not set securityContext.privileged=true), allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    );
    const ok = await core.createNamespacedPod({ namespace: 'sandbox', body: { metadata: { name: 'good' }, spec: compliant() as k8s.V1PodSpec } });
    expect(ok.metadata?.uid).toBeDefined();
    // Unlabelled namespaces admit anything.
    await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'priv' }, spec: { containers: [{ name: 'c', image: 'x', securityContext: { privileged: true } }] } } });
  });

  it('surfaces a rejected pod template on the ReplicaSet as ReplicaFailure/FailedCreate', async () => {
    const apps = server.kubeConfig().makeApiClient(k8s.AppsV1Api);
    await apps.createNamespacedDeployment({
      namespace: 'sandbox',
      body: { metadata: { name: 'unsafe' }, spec: { selector: { matchLabels: { app: 'unsafe' } }, template: { metadata: { labels: { app: 'unsafe' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } } },
    });
    const { waitFor } = await import('@paddock/testing');
    const failure = await waitFor(async () => {
      const rs = (await apps.listNamespacedReplicaSet({ namespace: 'sandbox', labelSelector: 'app=unsafe' })).items[0];
      return rs?.status?.conditions?.find((c) => c.type === 'ReplicaFailure');
    }, { what: 'ReplicaFailure condition' });
    expect(failure).toMatchObject({ status: 'True', reason: 'FailedCreate' });
    expect(failure.message).toMatch(/^pods "unsafe-[a-z0-9]+-[a-z0-9]{5}" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false/);
  });
});

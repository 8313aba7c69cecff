import { checkPodSecurityRestricted, validateManifest, type K8sTestServer, type PodSpec } from '@paddock/k8s-testserver';
import { waitFor } from '@paddock/testing';
import { buildSandboxPod, KubernetesBackend, podNameFor } from '../../src/backend/kubernetes';
import type { BackendEvent, LaunchContainer, LaunchSpec } from '../../src/backend/sandbox-backend';
import { createRestrictedNamespace, launchSpec, runnerKubeConfig, startRunnerK8sServer } from './support';

const NS = 'paddock-sandboxes-pod-parts';

const container = (name: string, command: string[], over: Partial<LaunchContainer> = {}): LaunchContainer => ({
  name,
  image: 'paddock/base:1',
  command,
  env: {},
  files: [],
  volumeMounts: [],
  ...over,
});

/** A sandbox with every pod part: an init container, a sidecar, a disk and a memory volume, mounts and a probe. */
const fullPod = (sandboxId: string, over: Partial<LaunchSpec> = {}): LaunchSpec =>
  launchSpec({
    sandboxId,
    command: ['sleep', '60'],
    primaryName: 'app',
    volumes: [
      { name: 'shared', medium: 'disk', sizeBytes: 64 * 1024 * 1024 },
      { name: 'cache', medium: 'memory', sizeBytes: 32 * 1024 * 1024 },
    ],
    volumeMounts: [
      { volume: 'shared', mountPath: '/data', readOnly: true },
      { volume: 'cache', mountPath: '/cache', readOnly: false, subPath: 'app' },
    ],
    initContainers: [container('setup', ['true'], { env: { STEP: 'one' }, volumeMounts: [{ volume: 'shared', mountPath: '/data', readOnly: false }] })],
    sidecars: [container('side', ['sleep', '60'], { volumeMounts: [{ volume: 'shared', mountPath: '/out', readOnly: false }] })],
    startupProbe: { exec: ['test', '-e', '/data/ready'], periodSeconds: 2, timeoutSeconds: 0.5, failureThreshold: 5, initialDelaySeconds: 1.5 },
    ...over,
  });

describe('the sandbox pod carries sidecars, init containers, scratch volumes, mounts and the startup probe', () => {
  let server: K8sTestServer;
  let backend: KubernetesBackend;
  const events: BackendEvent[] = [];
  const eventsOf = (id: string): BackendEvent[] => events.filter((e) => e.sandboxId === id);
  const terminalOf = (id: string): BackendEvent | undefined => eventsOf(id).find((e) => e.state === 'STATE_COMPLETED' || e.state === 'STATE_FAILED');

  beforeAll(async () => {
    server = await startRunnerK8sServer({ nodes: [{ name: 'node-1' }] });
    await createRestrictedNamespace(server.kubeConfig(), NS);
    backend = new KubernetesBackend({ runnerId: 'runner-a', namespace: NS, kubeConfig: runnerKubeConfig(server, NS), runtimeClasses: [] });
    backend.onEvent((e) => events.push(e));
  });
  afterAll(async () => {
    await backend.close();
    await server.close();
  });

  it('builds them as Kubernetes pod fields, inside Pod Security restricted and the API schema', () => {
    const pod = buildSandboxPod(fullPod('sb-shape'), { namespace: NS });
    const spec = pod.spec!;
    expect(checkPodSecurityRestricted(spec as unknown as PodSpec)).toEqual([]);
    expect(validateManifest(pod)).toEqual([]);
    expect(spec.containers.map((c) => c.name)).toEqual(['sandbox', 'side']);
    expect(spec.initContainers?.map((c) => c.name)).toEqual(['setup']);
    // Every container has the sandbox container's restricted security context.
    for (const c of [...spec.containers, ...(spec.initContainers ?? [])]) expect(c.securityContext).toEqual(spec.containers[0]?.securityContext);
    expect(spec.initContainers?.[0]).toMatchObject({ command: ['true'], env: [{ name: 'STEP', value: 'one' }] });
    expect(spec.volumes).toEqual(
      expect.arrayContaining([
        { name: 'v-shared', emptyDir: { sizeLimit: String(64 * 1024 * 1024) } },
        { name: 'v-cache', emptyDir: { medium: 'Memory', sizeLimit: String(32 * 1024 * 1024) } },
      ]),
    );
    expect(spec.containers[0]?.volumeMounts).toEqual(
      expect.arrayContaining([
        { name: 'v-shared', mountPath: '/data', readOnly: true },
        { name: 'v-cache', mountPath: '/cache', subPath: 'app' },
      ]),
    );
    expect(spec.containers[1]?.volumeMounts).toEqual(expect.arrayContaining([{ name: 'v-shared', mountPath: '/out' }]));
    // Probe timings are whole seconds, rounded up so a probe is never stricter than asked.
    expect(spec.containers[0]?.startupProbe).toEqual({ exec: { command: ['test', '-e', '/data/ready'] }, periodSeconds: 2, timeoutSeconds: 1, failureThreshold: 5, initialDelaySeconds: 2 });
    // Sidecars are capped at the sandbox's amounts and request none of them; init containers may use all of it.
    expect(spec.containers[1]?.resources).toEqual({
      limits: { cpu: '500m', memory: String(256 * 1024 * 1024), 'ephemeral-storage': String(1024 * 1024 * 1024) },
      requests: { cpu: '0', memory: '0', 'ephemeral-storage': '0' },
    });
    expect(spec.initContainers?.[0]?.resources?.limits).toEqual(spec.containers[0]?.resources?.limits);
  });

  it('is admitted into a restricted namespace, runs the init container first and reports RUNNING once every container is up', async () => {
    await backend.launch(fullPod('sb-full', { startupProbe: undefined }));
    await waitFor(() => eventsOf('sb-full').find((e) => e.state === 'STATE_RUNNING'), { what: 'sb-full RUNNING' });
    expect(eventsOf('sb-full').map((e) => e.state)).toEqual(['STATE_CREATING', 'STATE_RUNNING']);
    const pod = server.get('v1', 'Pod', podNameFor('sb-full'), NS) as { status?: { initContainerStatuses?: { name: string; state?: { terminated?: { exitCode: number } } }[]; containerStatuses?: { name: string; state?: { running?: unknown } }[] } };
    expect(pod.status?.initContainerStatuses?.map((c) => [c.name, c.state?.terminated?.exitCode])).toEqual([['setup', 0]]);
    expect(pod.status?.containerStatuses?.map((c) => [c.name, c.state?.running !== undefined])).toEqual([
      ['sandbox', true],
      ['side', true],
    ]);
  });

  it('fails the sandbox with INIT_CONTAINER_FAILED when an init container fails, and never reports it RUNNING', async () => {
    await backend.launch(fullPod('sb-init-fails', { startupProbe: undefined, initContainers: [container('setup', ['sh', '-c', 'echo no >&2; exit 3'])] }));
    const end = await waitFor(() => terminalOf('sb-init-fails'), { what: 'sb-init-fails ended' });
    expect(end).toMatchObject({ state: 'STATE_FAILED', reason: 'INIT_CONTAINER_FAILED', exitCode: 3 });
    expect(end.message).toContain('init container setup exited with status 3');
    expect(eventsOf('sb-init-fails').map((e) => e.state)).not.toContain('STATE_RUNNING');
  });

  it("ends the sandbox with the sandbox container's exit while a sidecar still runs", async () => {
    await backend.launch(fullPod('sb-primary-exits', { startupProbe: undefined, command: ['sh', '-c', 'sleep 0.2; exit 4'] }));
    const end = await waitFor(() => terminalOf('sb-primary-exits'), { what: 'sb-primary-exits ended' });
    expect(end).toMatchObject({ state: 'STATE_FAILED', reason: 'EXITED', exitCode: 4 });
  });

  it('refuses by name a container name the pod cannot carry, before creating anything', async () => {
    await expect(backend.launch(fullPod('sb-bad-name', { sidecars: [container('sandbox', ['sleep', '1'])] }))).rejects.toThrow(/containers name "sandbox"/);
    await expect(backend.launch(fullPod('sb-bad-init', { initContainers: [container('Not_A_Label', ['true'])] }))).rejects.toThrow(/initContainers name "Not_A_Label"/);
    expect(server.get('v1', 'Pod', podNameFor('sb-bad-name'), NS)).toBeUndefined();
    expect(server.get('v1', 'Pod', podNameFor('sb-bad-init'), NS)).toBeUndefined();
  });
});

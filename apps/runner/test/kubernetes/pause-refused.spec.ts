import { CoreV1Api as k8sCore } from '@kubernetes/client-node';
import type { K8sTestServer } from '@paddock/k8s-testserver';
import { waitFor } from '@paddock/testing';
import { isPaddockError, type PaddockError, type SandboxStateEvent } from '@paddock/contracts';
import { KubernetesBackend } from '../../src/backend/kubernetes';
import { PolicyHolder } from '../../src/policy/policy-holder';
import { SandboxService } from '../../src/service/sandbox-service';
import { createRestrictedNamespace, runnerKubeConfig, startRunnerK8sServer } from './support';

const NS = 'paddock-sandboxes-runner-k';
const ORG = 'org-1';
const quiet = { info: (): void => undefined, warn: (): void => undefined, error: (): void => undefined };

/**
 * A pod cannot be frozen through the Kubernetes API (and no runtime class here offers it), so the
 * Kubernetes backend does not pretend: pause and resume are refused naming the capability, and the
 * sandbox keeps running. Nor can the runner read a pod's filesystem consistently from outside, so
 * snapshots and restores are refused by name as well.
 */
describe('Kubernetes backend: pause and file-system snapshots are refused by name', () => {
  let server: K8sTestServer;
  let backend: KubernetesBackend;
  let service: SandboxService;
  const events: SandboxStateEvent[] = [];

  beforeAll(async () => {
    server = await startRunnerK8sServer({ nodes: [{ name: 'node-1' }] });
    await createRestrictedNamespace(server.kubeConfig(), NS);
    backend = new KubernetesBackend({ runnerId: 'runner-k', namespace: NS, kubeConfig: runnerKubeConfig(server, NS), runtimeClasses: [] });
    service = new SandboxService({
      backend,
      identity: { runnerId: 'runner-k', organizationId: ORG, clusterId: 'c', zone: 'z', runnerGroupId: 'default' },
      policy: new PolicyHolder(),
      capacity: { cpuMillis: 64_000, memoryBytes: 64 * 1024 ** 3, sandboxes: 10 },
      caps: { pidsMax: 512, diskBytes: 1024 ** 3, openFilesMax: 4096 },
      publishState: (e) => void events.push(e),
      clock: { now: () => new Date() },
      log: quiet,
    });
  });
  afterAll(async () => {
    service.close();
    await backend.close();
    await server.close();
  });

  it('refuses pause with a runner_capability violation naming pause, and leaves the sandbox RUNNING', async () => {
    await service.create({ sandboxId: 'k-1', organizationId: ORG, spec: { containers: [{ name: 'main', image: 'paddock/base:1' }] } });
    await waitFor(() => events.find((e) => e.sandboxId === 'k-1' && e.state === 'STATE_RUNNING'), { what: 'k-1 RUNNING' });
    const err = await service.pause({ sandboxId: 'k-1', organizationId: ORG }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isPaddockError(err)).toBe(true);
    expect(err as PaddockError).toMatchObject({ code: 'failed_precondition', reason: 'CWSANDBOX_NOT_IMPLEMENTED' });
    expect((err as PaddockError).violations).toEqual([{ field: 'pause', rule: 'runner_capability', description: 'pause and resume are not supported by the kubernetes backend' }]);
    // Nothing is paused, so there is nothing to resume: the running sandbox comes back as it is.
    expect((await service.resume({ sandboxId: 'k-1', organizationId: ORG })).status.state).toBe('STATE_RUNNING');
    expect(service.get({ sandboxId: 'k-1', organizationId: ORG }).status.state).toBe('STATE_RUNNING');
  });

  it('refuses a snapshot naming the capability, and a restore naming the field, and creates no pod for it', async () => {
    await service.create({ sandboxId: 'k-2', organizationId: ORG, spec: { containers: [{ name: 'main', image: 'paddock/base:1' }] } });
    await waitFor(() => events.find((e) => e.sandboxId === 'k-2' && e.state === 'STATE_RUNNING'), { what: 'k-2 RUNNING' });
    const snap = await service.snapshot({ sandboxId: 'k-2', organizationId: ORG, snapshotId: 'snap-k-2' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isPaddockError(snap)).toBe(true);
    expect(snap as PaddockError).toMatchObject({ code: 'failed_precondition', reason: 'CWSANDBOX_FSS_NOT_SUPPORTED' });
    expect((snap as PaddockError).violations).toEqual([expect.objectContaining({ field: 'scratchVolumeName', rule: 'runner_capability' })]);
    expect(service.get({ sandboxId: 'k-2', organizationId: ORG }).status.state).toBe('STATE_RUNNING');

    const restore = await service
      .create({
        sandboxId: 'k-3',
        organizationId: ORG,
        spec: { containers: [{ name: 'main', image: 'paddock/base:1' }], volumes: [{ name: 'workspace', scratch: { restoreFromSnapshotId: 'snap-k-2' } }] },
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(isPaddockError(restore)).toBe(true);
    // The scratch volume itself is refused too (no scratch volumes on this backend yet); the restore is named on its own.
    expect((restore as PaddockError).violations).toEqual(
      expect.arrayContaining([expect.objectContaining({ field: 'volumes[0].scratch.restoreFromSnapshotId', rule: 'runner_capability' })]),
    );
    const pods = await server.kubeConfig().makeApiClient(k8sCore).listNamespacedPod({ namespace: NS });
    expect(pods.items.map((p) => p.metadata?.name ?? '').filter((n) => n.includes('k-3'))).toEqual([]);
  });
});

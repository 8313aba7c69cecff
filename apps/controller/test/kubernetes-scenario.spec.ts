import type { KubeConfig } from '@kubernetes/client-node';
import { CoreV1Api } from '@kubernetes/client-node';
import { startK8sTestServer, validateManifest, type K8sTestServer } from '@paddock/k8s-testserver';
import { CONTROLLER_USER, controllerKubeConfig } from './support/controller-rbac';
import {
  CONTROL_PLANE_ENTRY,
  buildPackages,
  controllerNatsEnv,
  httpJson,
  provisionControllerRole,
  startControlPlaneProcess,
  startNats,
  startPostgres,
  waitFor,
  type AppProcess,
  type ThrowawayNats,
  type ThrowawayPostgres,
} from '@paddock/testing';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { subjects } from '@paddock/contracts';
import { connectNats, credsInfo, writeSecretFile } from '@paddock/nats';
import { parseEnv } from '../src/config';
import { startController, type ControllerHandle } from '../src/controller';

/**
 * The Kubernetes deployment path on the Kubernetes API test server: a runner declared through the control plane is
 * deployed by the controller (real @kubernetes/client-node, server-side apply), reported READY,
 * fails on an untolerated taint with the seed's hint, recovers after a PATCH of spec.overrides,
 * rolls out an update, and leaves nothing behind when deleted.
 */
/** Short, so the scenario sees the controller re-issue the runner's Secret before expiry. */
const RUNNER_CREDS_TTL_S = 6;

interface Runner {
  installStatus: string;
  installError: { reason: string; remediationHints: string[] } | null;
  activeRevision: string;
  targetRevision: string;
  rolloutInProgress: boolean;
  updateAvailable: boolean;
  etag: string;
  deploymentSpec: { image: string };
}

describe('controller on the Kubernetes API test server', () => {
  let pg: ThrowawayPostgres;
  let nats: ThrowawayNats;
  let cp: AppProcess & { token: string };
  let k8s: K8sTestServer;
  let kc: KubeConfig;
  let controller: ControllerHandle;
  let credsDir: string;
  const api = <T>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> => httpJson<T>(cp.url, method, path, cp.token, body);
  const runner = async (): Promise<Runner> => (await api<Runner>('GET', '/v1/sandbox/managedRunners/k8s-runner')).json;
  const objectsOfRunner = (): { kind: string; name: string }[] => {
    const kinds: [string, string][] = [['v1', 'Namespace'], ['v1', 'ServiceAccount'], ['v1', 'ConfigMap'], ['v1', 'Secret'], ['apps/v1', 'Deployment'], ['rbac.authorization.k8s.io/v1', 'Role'], ['rbac.authorization.k8s.io/v1', 'RoleBinding'], ['v1', 'Pod']];
    return kinds.flatMap(([v, k]) =>
      k8s
        .list(v, k)
        .filter((o) => o.metadata?.labels?.['paddock.dev/runner-id'] === 'k8s-runner' || (o.metadata?.namespace ?? '').endsWith('-k8s-runner'))
        .map((o) => ({ kind: k, name: o.metadata?.name ?? '' })),
    );
  };

  beforeAll(async () => {
    buildPackages(['@paddock/control-plane'], [CONTROL_PLANE_ENTRY]);
    pg = await startPostgres();
    nats = await startNats();
    const databaseUrl = await pg.createDatabase('paddock');
    cp = await startControlPlaneProcess({ databaseUrl, nats, env: { PADDOCK_MAINTENANCE_INTERVAL_MS: '0', PADDOCK_NATS_RUNNER_CREDS_TTL_S: String(RUNNER_CREDS_TTL_S) } });
    credsDir = mkdtempSync(join(tmpdir(), 'paddock-k8s-creds-'));
    const { env: natsEnv } = await controllerNatsEnv(cp, nats, { name: 'cks-test', zone: 'us-east-1' }, credsDir);
    k8s = await startK8sTestServer({
      nodes: [
        { name: 'system-1', labels: { 'node-pool': 'system' } },
        { name: 'gpu-1', labels: { 'node-pool': 'gpu' }, taints: [{ key: 'workload', value: 'gpu', effect: 'NoSchedule' }] },
      ],
      users: { [CONTROLLER_USER]: 'controller-token' },
    });
    kc = k8s.kubeConfig();
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: 'paddock-system' } } });
    const env = parseEnv({
      DATABASE_URL: await provisionControllerRole(databaseUrl, 'cks-test'),
      ...natsEnv,
      PADDOCK_CONTROL_PLANE_URL: cp.url,
      PADDOCK_API_KEY: cp.token,
      PADDOCK_CONTROLLER_DRIVER: 'kubernetes',
      PADDOCK_CLUSTER_NAME: 'cks-test',
      PADDOCK_ZONE: 'us-east-1',
      PADDOCK_CONTROLLER_ID: 'controller-a',
      PADDOCK_RESYNC_MS: '1000',
    });
    controller = await startController(env, { kubeConfig: controllerKubeConfig(k8s), log: () => undefined });
  }, 300_000);

  afterAll(async () => {
    await controller?.stop();
    await k8s?.close();
    await cp?.stop();
    await nats?.stop();
    pg?.stop();
    if (credsDir) rmSync(credsDir, { recursive: true, force: true });
  });

  it('registers its cluster, so cluster_name resolves on create', async () => {
    const clusters = await api<{ clusters: { id: string; name: string; zone: string }[] }>('GET', '/v1/clusters');
    expect(clusters.json.clusters).toContainEqual(expect.objectContaining({ id: controller.clusterId, name: 'cks-test', zone: 'us-east-1' }));
  });

  it('create → objects applied with server-side apply → RUNNER_INSTALL_STATUS_READY', async () => {
    const created = await api('POST', '/v1/sandbox/managedRunners', {
      identity: { runnerId: 'k8s-runner', zone: 'us-east-1', clusterName: 'cks-test' },
      spec: { releaseChannel: 'RELEASE_CHANNEL_STABLE', overrides: { nodeSelector: { 'node-pool': 'system' } } },
      policy: { displayName: 'default', constraints: { resources: { maxCpu: '4' } } },
    });
    expect(created.status).toBe(200);
    await waitFor(async () => (await runner()).installStatus === 'RUNNER_INSTALL_STATUS_READY', { timeoutMs: 60_000, what: 'READY' });
    const r = await runner();
    expect(r.activeRevision).toBe(r.targetRevision);
    const kinds = objectsOfRunner().map((o) => o.kind);
    expect(kinds).toEqual(expect.arrayContaining(['Namespace', 'ServiceAccount', 'ConfigMap', 'Deployment', 'RoleBinding', 'Pod']));
    // The runner's grant is a binding of the installed ClusterRole; no Role of its own.
    expect(kinds).not.toContain('Role');
    const binding = k8s.get('rbac.authorization.k8s.io/v1', 'RoleBinding', 'runner-k8s-runner-sandboxes', 'paddock-sandboxes-k8s-runner') as { roleRef?: unknown } | undefined;
    expect(binding?.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'paddock-runner-sandbox' });
    const sandboxNs = k8s.list('v1', 'Namespace').find((n) => n.metadata?.name === 'paddock-sandboxes-k8s-runner');
    expect(sandboxNs?.metadata?.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
    const dep = k8s.list('apps/v1', 'Deployment').find((d) => d.metadata?.name === 'runner-k8s-runner');
    expect(dep?.metadata?.managedFields?.map((m) => m.manager)).toContain('paddock-controller');
    for (const o of k8s.list('apps/v1', 'Deployment')) expect(validateManifest(o)).toEqual([]);
  });

  it('delivers the runner’s NATS user as a Secret mounted as a file, valid for that runner only, rotated before it expires', async () => {
    const secret = (): { data?: Record<string, string> } | undefined => k8s.get('v1', 'Secret', 'runner-k8s-runner-nats', 'paddock-runner-k8s-runner') as { data?: Record<string, string> } | undefined;
    const credsNow = (): string => Buffer.from(secret()?.data?.['nats.creds'] ?? '', 'base64').toString();
    const first = credsInfo(credsNow());
    expect(first).toMatchObject({ name: 'k8s-runner', role: 'runner' });
    expect(validateManifest(k8s.get('v1', 'Secret', 'runner-k8s-runner-nats', 'paddock-runner-k8s-runner') ?? {})).toEqual([]);
    interface PodSpec {
      securityContext?: { fsGroup?: number };
      containers?: { env?: { name: string; value?: string }[]; volumeMounts?: { name: string; mountPath: string; readOnly?: boolean; subPath?: string }[] }[];
      volumes?: { name: string; secret?: { secretName: string; defaultMode?: number } }[];
    }
    const dep = k8s.get('apps/v1', 'Deployment', 'runner-k8s-runner', 'paddock-runner-k8s-runner') as { spec?: { template?: { spec?: PodSpec } } } | undefined;
    const pod = dep?.spec?.template?.spec;
    const container = pod?.containers?.[0];
    expect(container?.env).toContainEqual({ name: 'NATS_CREDS', value: '/var/run/secrets/paddock.dev/nats/nats.creds' });
    for (const e of container?.env ?? []) expect(e.value ?? '').not.toContain(first.jwt);
    expect(container?.volumeMounts).toContainEqual({ name: 'nats-creds', mountPath: '/var/run/secrets/paddock.dev/nats', readOnly: true });
    expect(pod?.volumes).toContainEqual({ name: 'nats-creds', secret: { secretName: 'runner-k8s-runner-nats', defaultMode: 0o440 } });
    expect(pod?.securityContext?.fsGroup).toBe(10001);

    // What the runner pod reads from its mount: it may speak for itself only (the server says so).
    const file = join(credsDir, 'from-secret.creds');
    writeSecretFile(file, credsNow());
    const nc = await connectNats({ servers: nats.url, credsFile: file, reconnect: false });
    const errors: string[] = [];
    void (async () => {
      for await (const s of nc.status()) if (s.type === 'error') errors.push(s.error.message);
    })();
    nc.publish(subjects.runnerHeartbeat('k8s-runner'), '{}');
    nc.publish(subjects.runnerHeartbeat('another-runner'), '{}');
    await nc.flush();
    await waitFor(() => errors.length === 1, { timeoutMs: 5_000, what: 'the other runner’s heartbeat refused' });
    expect(errors[0]).toBe('Permissions Violation for Publish to "evt.runner.v1.another-runner.heartbeat"');
    await nc.close();

    const renewed = await waitFor(
      () => {
        const now = credsInfo(credsNow());
        return now.jwt !== first.jwt ? now : undefined;
      },
      { timeoutMs: RUNNER_CREDS_TTL_S * 1000, what: 'the Secret re-issued' },
    );
    expect(Date.now()).toBeLessThan(first.expiresAt?.getTime() ?? 0);
    expect(renewed.expiresAt?.getTime() ?? 0).toBeGreaterThan(first.expiresAt?.getTime() ?? 0);
  });

  it('a policy edit reaches the runner ConfigMap', async () => {
    const r = await runner();
    const patched = await api('PATCH', '/v1/sandbox/managedRunners/k8s-runner?updateMask=policy', { policy: { displayName: 'default', constraints: { resources: { maxCpu: '8' } } }, etag: r.etag });
    expect(patched.status).toBe(200);
    await waitFor(
      () => {
        const cm = k8s.list('v1', 'ConfigMap', 'paddock-runner-k8s-runner').find((c) => c.metadata?.name === 'runner-k8s-runner-config') as { data?: Record<string, string> } | undefined;
        return cm?.data?.['runner.json']?.includes('"maxCpu": "8"');
      },
      { timeoutMs: 30_000, what: 'ConfigMap updated' },
    );
  });

  it("a tainted node pool without the toleration → FAILED with the seed's hint; a PATCH of spec.overrides fixes it", async () => {
    const toGpu = await api('PATCH', '/v1/sandbox/managedRunners/k8s-runner?updateMask=spec.overrides', { spec: { overrides: { nodeSelector: { 'node-pool': 'gpu' } } } });
    expect(toGpu.status).toBe(200);
    await waitFor(async () => (await runner()).installStatus === 'RUNNER_INSTALL_STATUS_FAILED', { timeoutMs: 60_000, what: 'FAILED' });
    const failed = await runner();
    expect(failed.installError?.reason).toBe('Unschedulable');
    expect(failed.installError?.remediationHints).toContain("Add toleration for taint 'workload=gpu:NoSchedule'");
    const fix = await api('PATCH', '/v1/sandbox/managedRunners/k8s-runner?updateMask=spec.overrides', {
      spec: { overrides: { nodeSelector: { 'node-pool': 'gpu' }, tolerations: [{ key: 'workload', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] } },
    });
    expect(fix.status).toBe(200);
    await waitFor(async () => (await runner()).installStatus === 'RUNNER_INSTALL_STATUS_READY', { timeoutMs: 60_000, what: 'READY again' });
    expect((await runner()).installError).toBeNull();
  });

  it(':applyAvailableUpdate → new image rolled out, activeRevision == targetRevision, rollout finished', async () => {
    const published = await api<{ revision: number; image: string }>('POST', '/v1/sandbox/releases', { channel: 'RELEASE_CHANNEL_STABLE', version: '9.9.9', image: 'paddock/runner:9.9.9' });
    expect(published.status).toBe(200);
    expect((await runner()).updateAvailable).toBe(true);
    const up = await api<Runner>('POST', '/v1/sandbox/managedRunners/k8s-runner:applyAvailableUpdate', {});
    expect(up.status).toBe(200);
    expect(up.json.rolloutInProgress).toBe(true);
    await waitFor(
      async () => {
        const r = await runner();
        return r.activeRevision === r.targetRevision && !r.rolloutInProgress && r.installStatus === 'RUNNER_INSTALL_STATUS_READY';
      },
      { timeoutMs: 60_000, what: 'rollout finished' },
    );
    const dep = k8s.list('apps/v1', 'Deployment').find((d) => d.metadata?.name === 'runner-k8s-runner') as { spec?: { template?: { spec?: { containers?: { image?: string }[] } } } } | undefined;
    expect(dep?.spec?.template?.spec?.containers?.[0]?.image).toBe('paddock/runner:9.9.9');
    expect((await runner()).updateAvailable).toBe(false);
  });

  it('delete → zero objects and zero sandbox pods left, and the runner is gone (K-6)', async () => {
    // A sandbox pod the runner would have created.
    await kc.makeApiClient(CoreV1Api).createNamespacedPod({
      namespace: 'paddock-sandboxes-k8s-runner',
      body: {
        metadata: { name: 'sb-1', labels: { 'paddock.dev/runner-id': 'k8s-runner' } },
        spec: {
          automountServiceAccountToken: false,
          securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [{ name: 'main', image: 'busybox', command: ['sleep', '3600'], securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }],
        },
      },
    });
    const del = await api('DELETE', '/v1/sandbox/managedRunners/k8s-runner');
    expect(del.status).toBeLessThan(300);
    await waitFor(async () => (await api('GET', '/v1/sandbox/managedRunners/k8s-runner')).status === 404, { timeoutMs: 60_000, what: 'runner gone' });
    expect(objectsOfRunner()).toEqual([]);
  });
});

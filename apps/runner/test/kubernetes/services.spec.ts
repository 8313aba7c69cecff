import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { validateManifest, type K8sTestServer } from '@paddock/k8s-testserver';
import { PaddockError } from '@paddock/contracts';
import { waitFor } from '@paddock/testing';
import * as k8s from '@kubernetes/client-node';
import { KubernetesBackend, podNameFor } from '../../src/backend/kubernetes';
import { SANDBOX_POD_LABEL, serviceNameFor, type ServiceTarget } from '../../src/backend/kubernetes/services';
import type { BackendEvent } from '../../src/backend/sandbox-backend';
import { createRestrictedNamespace, launchSpec, runnerKubeConfig, startRunnerK8sServer } from './support';

const NS = 'paddock-sandboxes-svc';

/**
 * Public services on the Kubernetes backend: a ClusterIP Service per served port, owned by the
 * pod and deleted with the sandbox, and `connectPort` relaying through it. No cluster network
 * runs here, so the Service's address is resolved to a local TCP server standing in for it.
 */
describe('KubernetesBackend public services', () => {
  let server: K8sTestServer;
  let backend: KubernetesBackend;
  let standIn: Server;
  /** Every Service the backend asked to reach, in order. */
  const resolved: ServiceTarget[] = [];
  const received: Buffer[] = [];
  const events: BackendEvent[] = [];
  const stateOf = (id: string): string | undefined => events.filter((e) => e.sandboxId === id).at(-1)?.state;

  const backendOn = (): KubernetesBackend => {
    const b = new KubernetesBackend({
      runnerId: 'runner-a',
      namespace: NS,
      kubeConfig: runnerKubeConfig(server, NS),
      runtimeClasses: [],
      // Offered, but on no node of the test cluster: a pod asking for it is never scheduled.
      gpuTypes: ['H100'],
      serviceAddress: (t) => {
        resolved.push(t);
        return { host: '127.0.0.1', port: (standIn.address() as AddressInfo).port };
      },
    });
    b.onEvent((e) => events.push(e));
    return b;
  };

  beforeAll(async () => {
    // The stand-in echoes what it gets and ends when the caller does.
    standIn = createServer((sock: Socket) => {
      sock.on('data', (c: Buffer) => received.push(c));
      sock.pipe(sock);
    });
    await new Promise<void>((r) => standIn.listen(0, '127.0.0.1', r));
    server = await startRunnerK8sServer({ nodes: [{ name: 'node-1' }] });
    await createRestrictedNamespace(server.kubeConfig(), NS);
    backend = backendOn();
  });
  afterAll(async () => {
    await backend.close();
    await server.close();
    await new Promise((r) => standIn.close(r));
  });

  const running = async (sandboxId: string, servicePorts: number[]): Promise<void> => {
    await backend.launch(launchSpec({ sandboxId, servicePorts }));
    await waitFor(() => stateOf(sandboxId) === 'STATE_RUNNING' || undefined, { what: `${sandboxId} RUNNING` });
  };

  /** Sends `data`, half-closes, and collects everything until the other side ends. */
  const roundTrip = async (sock: Duplex, data: Buffer): Promise<Buffer> => {
    const chunks: Buffer[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      sock.on('data', (c: Buffer) => chunks.push(c));
      sock.once('end', resolve);
      sock.once('error', reject);
    });
    sock.end(data);
    await ended;
    return Buffer.concat(chunks);
  };

  const refusal = async (p: Promise<unknown>): Promise<PaddockError> => {
    const e = await p.then(() => undefined, (err: unknown) => err);
    expect(e).toBeInstanceOf(PaddockError);
    return e as PaddockError;
  };

  it('creates one ClusterIP Service per served port, selecting only its pod and owned by it, and admits the relay on those ports', async () => {
    await running('sb-web', [8000, 8001]);
    const podName = podNameFor('sb-web');
    const pod = server.get('v1', 'Pod', podName, NS) as k8s.V1Pod | undefined;
    expect(pod?.metadata?.labels?.[SANDBOX_POD_LABEL]).toBe(podName);
    expect(pod?.spec?.containers[0]?.ports?.map((p) => p.containerPort)).toEqual([8000, 8001]);
    for (const port of [8000, 8001]) {
      const svc = server.get('v1', 'Service', serviceNameFor(podName, port), NS) as k8s.V1Service | undefined;
      expect(validateManifest(svc)).toEqual([]);
      expect(svc?.spec).toMatchObject({ type: 'ClusterIP', selector: { [SANDBOX_POD_LABEL]: podName }, ports: [{ protocol: 'TCP', port, targetPort: port }] });
      expect(svc?.metadata?.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Pod', name: podName, uid: pod?.metadata?.uid, controller: true }]);
    }
    expect(server.list('v1', 'Service', NS)).toHaveLength(2);
    // The wire form of the rule: `from` (the client model's `_from`) reached the server, so the rule is not "from anywhere".
    const np = server.get('networking.k8s.io/v1', 'NetworkPolicy', podName, NS) as { spec?: { ingress?: unknown } } | undefined;
    expect(np?.spec?.ingress).toEqual([
      {
        from: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'paddock-runner-runner-a' } },
            podSelector: { matchLabels: { 'paddock.dev/runner-id': 'runner-a', 'app.kubernetes.io/component': 'runner' } },
          },
        ],
        ports: [
          { protocol: 'TCP', port: 8000 },
          { protocol: 'TCP', port: 8001 },
        ],
      },
    ]);
  });

  it('relays bytes both ways through the Service of the port, and refuses a port the sandbox does not serve without connecting', async () => {
    const payload = randomBytes(1 << 20);
    const before = resolved.length;
    received.length = 0;
    const echoed = await roundTrip(await backend.connectPort('sb-web', 8001), payload);
    expect(createHash('sha256').update(echoed).digest('hex')).toBe(createHash('sha256').update(payload).digest('hex'));
    expect(Buffer.concat(received).equals(payload)).toBe(true);
    expect(resolved.slice(before)).toEqual([{ name: serviceNameFor(podNameFor('sb-web'), 8001), namespace: NS, port: 8001 }]);

    const e = await refusal(backend.connectPort('sb-web', 9000));
    expect(e.reason).toBe('CWSANDBOX_INVALID_REQUEST');
    expect(e.violations.map((v) => v.rule)).toEqual(['public_service']);
    await refusal(backend.connectPort('sb-unknown', 8000)).then((err) => expect(err.reason).toBe('CWSANDBOX_SANDBOX_NOT_FOUND'));
    expect(resolved).toHaveLength(before + 1);
  });

  it('a restarted runner relays to the ports its pods declare', async () => {
    const restarted = backendOn();
    try {
      const found = await restarted.recover();
      expect(found.map((s) => s.sandboxId)).toContain('sb-web');
      await waitFor(async () => {
        const sock = await restarted.connectPort('sb-web', 8000).catch(() => undefined);
        return sock ? (await roundTrip(sock, Buffer.from('after restart'))).toString() : undefined;
      }, { what: 'relay from the restarted runner' }).then((echo) => expect(echo).toBe('after restart'));
      expect((await refusal(restarted.connectPort('sb-web', 9000))).reason).toBe('CWSANDBOX_INVALID_REQUEST');
    } finally {
      await restarted.close();
    }
  });

  it('refuses to relay to a sandbox that is not RUNNING yet', async () => {
    // A GPU model no node has: the pod stays Pending, the sandbox CREATING.
    await backend.launch(launchSpec({ sandboxId: 'sb-starting', servicePorts: [8000], gpuCount: 1, gpuType: 'H100' }));
    await waitFor(() => server.get('v1', 'Service', serviceNameFor(podNameFor('sb-starting'), 8000), NS), { what: 'the Service of a starting sandbox' });
    expect(stateOf('sb-starting')).toBe('STATE_CREATING');
    const before = resolved.length;
    const e = await refusal(backend.connectPort('sb-starting', 8000));
    expect(e.reason).toBe('CWSANDBOX_SANDBOX_NOT_RUNNING');
    expect(resolved).toHaveLength(before);
    await backend.stop('sb-starting', 0, 'STOPPED_BY_USER');
  });

  it('deletes the Services with the sandbox, and refuses to relay to it afterwards', async () => {
    await backend.stop('sb-web', 0, 'STOPPED_BY_USER');
    for (const port of [8000, 8001]) expect(server.get('v1', 'Service', serviceNameFor(podNameFor('sb-web'), port), NS)).toBeUndefined();
    await waitFor(() => (stateOf('sb-web') === 'STATE_COMPLETED' ? true : undefined), { what: 'sb-web ended' });
    expect((await refusal(backend.connectPort('sb-web', 8000))).reason).toBe('CWSANDBOX_SANDBOX_NOT_RUNNING');
    await waitFor(() => (server.list('v1', 'Service', NS).length === 0 ? true : undefined), { what: 'no Service left' });
  });

  it('leaves no Service behind a pod deleted by someone else: the pod owns them', async () => {
    await running('sb-orphan', [8080]);
    await server.kubeConfig().makeApiClient(k8s.CoreV1Api).deleteNamespacedPod({ namespace: NS, name: podNameFor('sb-orphan'), gracePeriodSeconds: 0 });
    await waitFor(() => (server.get('v1', 'Service', serviceNameFor(podNameFor('sb-orphan'), 8080), NS) === undefined ? true : undefined), { what: 'the Service collected with its pod' });
    expect(server.list('v1', 'Service', NS)).toEqual([]);
  });
});

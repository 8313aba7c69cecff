import { connect, type Socket } from 'node:net';
import * as k8s from '@kubernetes/client-node';
import { LABELS, type SandboxState } from '@paddock/contracts';
import { portNotServed, sandboxNotFound, sandboxNotRunning } from '../local/errors';
import type { LaunchSpec } from '../sandbox-backend';

/**
 * A sandbox's public services on Kubernetes: one ClusterIP `Service` per port the launch serves
 * (`LaunchSpec.servicePorts`, the VISIBILITY_PUBLIC HTTP ports). A port without public
 * visibility is reachable only inside the sandbox, so it gets no Service: nothing outside would
 * be allowed to use it. Each Service selects the sandbox's pod alone (by its pod-name label, which
 * is unique where the sandbox-id label is clipped at 63 characters) and is owned by the pod, so
 * the garbage collector removes it with the pod even when no runner is left to; the runner also
 * deletes it on stop. The runner reaches it for the gateway's `portForward` relay by its cluster
 * DNS name, and the sandbox's NetworkPolicy admits the runner's pods on exactly these ports.
 */

/** Label carrying the pod's own name: the one label guaranteed unique to a sandbox's pod. */
export const SANDBOX_POD_LABEL = 'paddock.dev/sandbox-pod';
/** Prefix of the sandbox container's port names (`p8000`): an IANA service name, ≤ 15 characters. */
const PORT_NAME_PREFIX = 'p';

/**
 * The Service of `port`: `<pod>-p<port>`. A pod name is `sbx-…-<hash>` of at most 55 characters
 * starting with a letter, so this is a DNS-1035 label of at most 62.
 */
export function serviceNameFor(podName: string, port: number): string {
  return `${podName}-p${port}`;
}

/** The distinct ports a launch serves, in order. */
export function servedPortsOf(spec: Pick<LaunchSpec, 'servicePorts'>): number[] {
  return [...new Set(spec.servicePorts ?? [])];
}

/** The sandbox container's `ports`: the served ports, declared so they are visible on the pod (and read back after a restart). */
export function containerPortsOf(spec: Pick<LaunchSpec, 'servicePorts'>): { ports?: k8s.V1ContainerPort[] } {
  const ports = servedPortsOf(spec);
  return ports.length ? { ports: ports.map((p) => ({ name: `${PORT_NAME_PREFIX}${p}`, containerPort: p, protocol: 'TCP' })) } : {};
}

/** The ports a live pod serves, from its sandbox container's declared ports. */
export function servedPortsOfPod(pod: k8s.V1Pod | undefined, containerName: string): number[] {
  const c = pod?.spec?.containers.find((x) => x.name === containerName);
  return (c?.ports ?? []).filter((p) => p.name?.startsWith(PORT_NAME_PREFIX) && (p.protocol ?? 'TCP') === 'TCP').map((p) => p.containerPort);
}

/**
 * Who may open connections to a sandbox's served ports: the runner's own pods (the relay). By
 * default the pods the controller deploys for this runner (`paddock-runner-<runnerId>`, labelled
 * with the runner id and the `runner` component); nothing else in the cluster, other sandboxes
 * included, reaches them.
 */
export function relayPeerFor(runnerId: string, runnerNamespace: string, runnerLabelValue: string): k8s.V1NetworkPolicyPeer {
  return {
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': runnerNamespace } },
    podSelector: { matchLabels: { [LABELS.runnerId]: runnerLabelValue, [LABELS.component]: 'runner' } },
  };
}

/** The NetworkPolicy's ingress: the relay on the served ports, or nothing at all (ingress denied). */
export function serviceIngressOf(spec: Pick<LaunchSpec, 'servicePorts'>, relay: k8s.V1NetworkPolicyPeer | undefined): k8s.V1NetworkPolicyIngressRule[] {
  const ports = servedPortsOf(spec);
  if (!relay || ports.length === 0) return [];
  return [{ _from: [relay], ports: ports.map((port) => ({ protocol: 'TCP', port })) }];
}

/**
 * The Services of a launch, owned by its pod once the pod exists (`owner` carries its uid; the
 * every-field test and the conformance test build them without one).
 */
export function buildSandboxServices(
  spec: Pick<LaunchSpec, 'servicePorts'>,
  pod: { name: string; namespace: string; labels: Record<string, string>; uid?: string },
): k8s.V1Service[] {
  return servedPortsOf(spec).map((port) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: serviceNameFor(pod.name, port),
      namespace: pod.namespace,
      labels: pod.labels,
      // No blockOwnerDeletion: it needs rights on the pod's finalizers, and nothing waits on it.
      ...(pod.uid ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: pod.name, uid: pod.uid, controller: true }] } : {}),
    },
    spec: {
      type: 'ClusterIP',
      selector: { [SANDBOX_POD_LABEL]: pod.name },
      ports: [{ name: `${PORT_NAME_PREFIX}${port}`, protocol: 'TCP', port, targetPort: port }],
    },
  }));
}

/** Where a Service is, to open a TCP connection to it. */
export interface ServiceTarget {
  name: string;
  namespace: string;
  port: number;
}
export type ServiceAddressResolver = (target: ServiceTarget) => { host: string; port: number } | Promise<{ host: string; port: number }>;

/**
 * The Service's cluster DNS name, fully qualified (the trailing dot skips the pod's search
 * domains, which would cost three failed lookups per connection under the usual `ndots:5`).
 */
export function clusterDnsResolver(clusterDomain: string): ServiceAddressResolver {
  return (t) => ({ host: `${t.name}.${t.namespace}.svc.${clusterDomain}.`, port: t.port });
}

/** One TCP connection to `host:port`, resolved once connected (an error before that rejects). */
export function connectTcp(addr: { host: string; port: number }): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: addr.host, port: addr.port });
    const fail = (e: Error): void => reject(e);
    sock.once('error', fail);
    sock.once('connect', () => {
      sock.off('error', fail);
      resolve(sock);
    });
  });
}

const statusCode = (e: unknown): number | undefined => (e instanceof k8s.ApiException ? e.code : undefined);

/**
 * The Services of the sandboxes of one namespace, as the backend creates, deletes and connects to
 * them. The ports each sandbox serves are remembered from its launch and, after a runner restart,
 * read back from its pod (`servedPortsOfPod`).
 */
export class SandboxServices {
  private readonly launched = new Map<string, number[]>();

  constructor(
    private readonly core: k8s.CoreV1Api,
    private readonly namespace: string,
    private readonly fieldManager: string,
    private readonly resolve: ServiceAddressResolver,
  ) {}

  /** Creates the Services of `spec` for its pod (idempotent: one already there is kept). */
  async create(spec: Pick<LaunchSpec, 'sandboxId' | 'servicePorts'>, pod: k8s.V1Pod): Promise<void> {
    const name = pod.metadata?.name ?? '';
    const services = buildSandboxServices(spec, { name, namespace: this.namespace, labels: pod.metadata?.labels ?? {}, ...(pod.metadata?.uid ? { uid: pod.metadata.uid } : {}) });
    if (services.length === 0) return;
    this.launched.set(spec.sandboxId, servedPortsOf(spec));
    for (const body of services) {
      try {
        await this.core.createNamespacedService({ namespace: this.namespace, body, fieldManager: this.fieldManager });
      } catch (e) {
        if (statusCode(e) !== 409) throw e;
      }
    }
  }

  /** The ports a sandbox serves: as launched by this process, else as its pod declares them. */
  servedPorts(sandboxId: string, pod: k8s.V1Pod | undefined, containerName: string): number[] {
    return this.launched.get(sandboxId) ?? servedPortsOfPod(pod, containerName);
  }

  /** Deletes a sandbox's Services; its pod owns them, so any this misses goes with the pod. */
  async delete(sandboxId: string, podName: string, ports: readonly number[]): Promise<void> {
    this.launched.delete(sandboxId);
    for (const port of ports) {
      try {
        await this.core.deleteNamespacedService({ namespace: this.namespace, name: serviceNameFor(podName, port) });
      } catch (e) {
        if (statusCode(e) !== 404) throw e;
      }
    }
  }

  /**
   * One TCP connection to a served port of a RUNNING sandbox, through its Service. Refused
   * without a connection attempt when the sandbox is unknown, not running, or the port is not one
   * it serves publicly (the same rules as the local backend's relay).
   */
  async connect(req: { sandboxId: string; podName: string; port: number; state: SandboxState | undefined; served: readonly number[] }): Promise<Socket> {
    if (req.state === undefined) throw sandboxNotFound(req.sandboxId);
    if (req.state !== 'STATE_RUNNING') throw sandboxNotRunning(req.sandboxId, req.state);
    if (!req.served.includes(req.port)) throw portNotServed(req.sandboxId, req.port);
    return connectTcp(await this.resolve({ name: serviceNameFor(req.podName, req.port), namespace: this.namespace, port: req.port }));
  }
}

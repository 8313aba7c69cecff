import { createHash } from 'node:crypto';
import { imagePullSecretsOf } from './pull-secret';
import { containerPortsOf, SANDBOX_POD_LABEL, serviceIngressOf } from './services';
import { podAnnotationsOf, podLabelsOf } from './pod-metadata';
import { podPlacementOf } from './pod-placement';
import { sandboxEnvOf } from './secret-env';
import { containerSecurityContext, SANDBOX_UID, WORKSPACE_PATH, initContainersOf, podVolumeMountsOf, scratchVolumesOf, sidecarsOf, startupProbeOf } from './pod-parts';
import type { V1NetworkPolicy, V1NetworkPolicyEgressRule, V1NetworkPolicyPeer, V1Pod } from '@kubernetes/client-node';
import { ANNOTATIONS, LABELS } from '@paddock/contracts';
import type { EgressCidrRule, LaunchSpec } from '../sandbox-backend';

const SANDBOX_ID_LABEL = LABELS.sandboxId;
const ORGANIZATION_ID_LABEL = LABELS.organizationId;
export const RUNNER_LABEL = LABELS.runnerId;
/** Exact ids and the launch labels live in annotations: label values are capped at 63 characters. */
export const SANDBOX_ID_ANNOTATION = ANNOTATIONS.sandboxId;
export const LAUNCH_LABELS_ANNOTATION = ANNOTATIONS.launchLabels;
/**
 * `pending` from the pod's creation until the runner has written the launch's files through exec,
 * then `written`. A pod still `pending` that no live runner is seeding was left by a runner that
 * died mid-launch: its files are lost with that runner, so recovery fails it instead of serving a
 * sandbox without them.
 */
export const LAUNCH_FILES_ANNOTATION = ANNOTATIONS.launchFiles;
/**
 * A main command with launch files waits for this marker, in its working directory (where the
 * files land too), before it execs: files are written through pods/exec, which needs a running
 * container, so without the gate the command would race its own inputs.
 */
export const LAUNCH_GATE_MARKER = '.paddock-launch-ready';
const LAUNCH_GATE_SCRIPT = `while [ ! -e ${LAUNCH_GATE_MARKER} ]; do sleep 0.05 2>/dev/null || sleep 1; done; rm -f ${LAUNCH_GATE_MARKER}; exec "$@"`;
export const CONTAINER_NAME = 'sandbox';
/** The nodes' GPU extended resource, and the node label naming their model (GPU feature discovery's). */
export const DEFAULT_GPU_RESOURCE = 'nvidia.com/gpu';
export const DEFAULT_GPU_TYPE_LABEL = 'nvidia.com/gpu.product';
export { SANDBOX_UID, WORKSPACE_PATH } from './pod-parts';

export interface SandboxPodOptions {
  namespace: string;
  /** RuntimeClass the platform pins (e.g. gVisor). Wins over the spec label; nothing can override it. */
  runtimeClassName?: string;
  /** RuntimeClasses the runner offers for `LaunchSpec.runtimeClassName`; empty = whatever the cluster has. */
  allowedRuntimeClasses?: readonly string[];
  /** Run in a user namespace (`hostUsers: false`). Default true; needs a kubelet with user namespaces. */
  userNamespaces?: boolean;
  /** Extended resource that counts GPUs on the nodes (default `nvidia.com/gpu`). */
  gpuResource?: string;
  /** GPU models the runner can select, by the node label `gpuTypeLabel`; empty = it cannot select one. */
  gpuTypes?: readonly string[];
  /** Node label naming each node's GPU model (default `nvidia.com/gpu.product`, as GPU feature discovery sets it). */
  gpuTypeLabel?: string;
  /**
   * Secrets (in the sandbox namespace, type `kubernetes.io/dockerconfigjson`) the kubelet pulls
   * sandbox images with: the runner's registry credentials, as the local backend's auth file.
   */
  imagePullSecrets?: readonly string[];
  /** Who may connect to the sandbox's public service ports (the runner's relay); absent = no one. */
  serviceRelay?: V1NetworkPolicyPeer;
}

/** DNS-1123 pod name derived from the sandbox id: readable prefix plus a hash so distinct ids never collide. */
export function podNameFor(sandboxId: string): string {
  const readable = sandboxId.toLowerCase().replace(/[^a-z0-9-]/g, '-').replace(/^-+|-+$/g, '').slice(0, 40);
  const hash = createHash('sha256').update(sandboxId).digest('hex').slice(0, 10);
  return `sbx-${readable ? `${readable}-` : ''}${hash}`;
}

/** A valid label value (≤ 63, alphanumeric ends, `-_.` inside); exact ids are kept in annotations. */
export function labelValue(v: string): string {
  return v.replace(/[^A-Za-z0-9_.-]/g, '-').slice(0, 63).replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
}

/**
 * The RuntimeClass a launch gets: the platform's pinned class, else the one the policy resolved
 * (never silently dropped: a sandbox whose policy says gVisor must not run under the node's
 * default runtime), else none. A resolved class the runner does not offer is refused by the policy
 * engine before launch, and by {@link refusedRuntimeClass} at launch.
 */
export function runtimeClassFor(spec: LaunchSpec, opts: SandboxPodOptions): string | undefined {
  return opts.runtimeClassName ?? spec.runtimeClassName;
}

/** Why `spec.runtimeClassName` cannot be applied under `opts`, if it cannot. */
/**
 * A by-tag image the policy admits only at pinned digests: the kubelet resolves the tag when it
 * pulls, after the pod exists, so this backend cannot hold it to the pins and refuses it by name.
 */
export function refusedDigestPins(spec: LaunchSpec): string | undefined {
  if (!spec.imageDigests?.length) return undefined;
  return `image ${spec.image}: constraints.image.allowedImages admits this tag only at ${spec.imageDigests.join(', ')}, and the Kubernetes backend cannot check what a tag resolves to before the pod pulls it; name the image by one of those digests`;
}

export function refusedRuntimeClass(spec: LaunchSpec, opts: SandboxPodOptions): string | undefined {
  const wanted = spec.runtimeClassName;
  if (wanted === undefined) return undefined;
  if (opts.runtimeClassName !== undefined && opts.runtimeClassName !== wanted) {
    return `runtime class ${wanted} was resolved, but this runner pins every sandbox to ${opts.runtimeClassName}`;
  }
  const offered = opts.allowedRuntimeClasses ?? [];
  if (opts.runtimeClassName === undefined && offered.length > 0 && !offered.includes(wanted)) {
    return `runtime class ${wanted} is not offered by this runner (offers ${offered.join(', ')})`;
  }
  return undefined;
}

/**
 * Why `spec.gpuType` cannot be honoured under `opts`, if it cannot: the runner selects GPU models
 * only among those it offers, by node label. Refused, never ignored: an H100 request must not
 * land on whatever GPU a node has.
 */
export function refusedGpuType(spec: LaunchSpec, opts: SandboxPodOptions): string | undefined {
  if (!spec.gpuCount || spec.gpuType === undefined) return undefined;
  const offered = opts.gpuTypes ?? [];
  if (offered.includes(spec.gpuType)) return undefined;
  return offered.length
    ? `GPU type ${spec.gpuType} is not offered by this runner (offers ${offered.join(', ')})`
    : `GPU type ${spec.gpuType} was asked for, but this runner does not select GPU models; omit the type or pick another runner`;
}


/** Whether the main container waits for its launch files (see {@link LAUNCH_GATE_MARKER}). */
export function launchIsGated(spec: LaunchSpec): boolean {
  return spec.files.length > 0 && spec.command.length > 0;
}

/** The main container's command: the spec's own, behind the launch gate when files must land first. */
function mainCommand(spec: LaunchSpec): string[] {
  return launchIsGated(spec) ? ['sh', '-c', LAUNCH_GATE_SCRIPT, 'paddock-launch-gate', ...spec.command] : [...spec.command];
}

/** The pod's requests: the limits, with CPU and memory lowered to the sandbox's own requests. */
function requestsOf(spec: LaunchSpec, limits: Record<string, string>): Record<string, string> {
  const requests = { ...limits };
  if (spec.cpuRequestMillis !== undefined && spec.cpuRequestMillis > 0 && spec.cpuRequestMillis <= spec.cpuMillis) {
    requests.cpu = `${spec.cpuRequestMillis}m`;
  }
  if (spec.memoryRequestBytes !== undefined && spec.memoryRequestBytes > 0 && spec.memoryRequestBytes <= spec.memoryBytes) {
    requests.memory = String(spec.memoryRequestBytes);
  }
  return requests;
}

/**
 * Builds the sandbox pod from a closed schema. Pure. Every field is set here from typed LaunchSpec
 * values; nothing from the user is spread into the manifest, so a spec cannot smuggle
 * `nodeName`, `tolerations`, `hostUsers`, host namespaces, volumes or capabilities (failure mode 11).
 * The settings are those of Pod Security `restricted` (checked again by namespace admission).
 */
export function buildSandboxPod(spec: LaunchSpec, opts: SandboxPodOptions): V1Pod {
  const runtimeClassName = runtimeClassFor(spec, opts);
  const limits: Record<string, string> = { 'ephemeral-storage': String(spec.diskBytes) };
  if (spec.cpuMillis > 0) limits.cpu = `${spec.cpuMillis}m`;
  if (spec.memoryBytes > 0) limits.memory = String(spec.memoryBytes);
  if (spec.gpuCount) limits[opts.gpuResource ?? DEFAULT_GPU_RESOURCE] = String(spec.gpuCount);
  const sizeLimit = String(Math.max(1, spec.diskBytes));
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podNameFor(spec.sandboxId),
      namespace: opts.namespace,
      // The runner policy's base labels and the resolved annotations, under the platform's own keys.
      labels: podLabelsOf(spec, {
        [SANDBOX_ID_LABEL]: labelValue(spec.sandboxId),
        [ORGANIZATION_ID_LABEL]: labelValue(spec.organizationId),
        [RUNNER_LABEL]: labelValue(spec.runnerId),
        // What the sandbox's Services select: unique to this pod, where the id label may be clipped.
        [SANDBOX_POD_LABEL]: podNameFor(spec.sandboxId),
      }),
      annotations: podAnnotationsOf(spec, {
        [SANDBOX_ID_ANNOTATION]: spec.sandboxId,
        [LAUNCH_LABELS_ANNOTATION]: JSON.stringify(spec.labels),
        ...(spec.files.length > 0 ? { [LAUNCH_FILES_ANNOTATION]: 'pending' } : {}),
      }),
    },
    spec: {
      restartPolicy: 'Never',
      activeDeadlineSeconds: Math.max(1, Math.ceil(spec.lifetimeSeconds)),
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      ...imagePullSecretsOf(spec, podNameFor(spec.sandboxId)),
      ...(opts.userNamespaces === false ? {} : { hostUsers: false }),
      ...(runtimeClassName ? { runtimeClassName } : {}),
      // The only node selection a launch gets: its GPU model and memory, and the runner policy's base placement (pod-placement.ts).
      ...podPlacementOf(spec, { gpuTypeLabel: opts.gpuTypeLabel ?? DEFAULT_GPU_TYPE_LABEL }),
      ...(opts.imagePullSecrets?.length ? { imagePullSecrets: opts.imagePullSecrets.map((name) => ({ name })) } : {}),
      terminationGracePeriodSeconds: 10,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: SANDBOX_UID,
        runAsGroup: SANDBOX_UID,
        fsGroup: SANDBOX_UID,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: [
        {
          name: CONTAINER_NAME,
          image: spec.image,
          imagePullPolicy: 'IfNotPresent',
          ...(spec.command.length > 0 ? { command: mainCommand(spec) } : {}),
          workingDir: spec.workingDir ?? WORKSPACE_PATH,
          env: sandboxEnvOf(spec, podNameFor(spec.sandboxId)),
          resources: { limits, requests: requestsOf(spec, limits) },
          securityContext: containerSecurityContext(spec.securityContext),
          ...(spec.startupProbe ? { startupProbe: startupProbeOf(spec.startupProbe) } : {}),
          ...containerPortsOf(spec),
          volumeMounts: [
            { name: 'workspace', mountPath: WORKSPACE_PATH },
            { name: 'tmp', mountPath: '/tmp' },
            ...podVolumeMountsOf(spec.volumeMounts ?? []),
          ],
        },
        ...sidecarsOf(spec, limits),
      ],
      ...(spec.initContainers?.length ? { initContainers: initContainersOf(spec, limits) } : {}),
      volumes: [
        { name: 'workspace', emptyDir: { sizeLimit } },
        { name: 'tmp', emptyDir: { sizeLimit } },
        ...scratchVolumesOf(spec.volumes ?? []),
      ],
    },
  };
}

function egressRule(r: EgressCidrRule): V1NetworkPolicyEgressRule {
  return {
    to: [{ ipBlock: { cidr: r.cidr, ...(r.except.length > 0 ? { except: [...r.except] } : {}) } }],
    ...(r.ports.length > 0
      ? { ports: r.ports.map((p) => ({ protocol: p.protocol, port: p.port, ...(p.endPort !== undefined ? { endPort: p.endPort } : {}) })) }
      : {}),
  };
}

/**
 * One NetworkPolicy per sandbox, selecting its pod. Ingress is denied (no rule), but for the
 * runner's relay on the ports of the sandbox's public services. Egress:
 * `network: 'host'` → one empty rule (allow all egress); otherwise one `ipBlock` rule per resolved
 * CIDR grant (`egressCidrs`, with its exceptions and ports), and none at all means deny all. DNS
 * is not granted implicitly: a sandbox limited to CIDR grants connects by address (or is granted
 * its resolver's address and port 53).
 */
export function buildSandboxNetworkPolicy(spec: LaunchSpec, opts: SandboxPodOptions): V1NetworkPolicy {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: {
      name: podNameFor(spec.sandboxId),
      namespace: opts.namespace,
      labels: {
        [SANDBOX_ID_LABEL]: labelValue(spec.sandboxId),
        [ORGANIZATION_ID_LABEL]: labelValue(spec.organizationId),
        [RUNNER_LABEL]: labelValue(spec.runnerId),
      },
    },
    spec: {
      podSelector: { matchLabels: { [SANDBOX_ID_LABEL]: labelValue(spec.sandboxId), [RUNNER_LABEL]: labelValue(spec.runnerId) } },
      policyTypes: ['Ingress', 'Egress'],
      // Denied, but for the runner's relay on the public service ports (services.ts).
      ingress: serviceIngressOf(spec, opts.serviceRelay),
      egress: spec.network === 'host' ? [{}] : (spec.egressCidrs ?? []).map(egressRule),
    },
  };
}

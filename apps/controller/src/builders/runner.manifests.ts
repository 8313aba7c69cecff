import { LABELS, MANAGED_BY_CONTROLLER, RUNNER_SANDBOX_CLUSTER_ROLE } from '@paddock/contracts';
import { runnerConfigOf, type DesiredRunner } from '../desired';
import {
  ANNOTATION_REVISION,
  LABEL_CLUSTER,
  LABEL_COMPONENT,
  LABEL_MANAGED_BY,
  LABEL_ORG,
  LABEL_RUNNER,
  LABEL_RUNNER_UID,
  runnerConfigMapName,
  runnerName,
  runnerSandboxBindingName,
  runnerNatsSecretName,
  runnerNamespace,
  sandboxNamespace,
} from './names';

/** A Kubernetes object as the builders emit it (plain JSON, applied with server-side apply). */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

export interface BuildOptions {
  /** NATS URL the runner pods use to reach the platform. */
  natsUrl: string;
  /** The runner's `.creds` content: put in a Secret mounted as a file (none = no NATS auth). */
  natsCreds?: string;
}

const CONFIG_MOUNT = '/etc/paddock';
const CONFIG_FILE = 'runner.json';
/** Where the runner's NATS credentials Secret is mounted (read-only, group-readable by fsGroup only). */
export const NATS_CREDS_MOUNT = '/var/run/secrets/paddock.dev/nats';
export const NATS_CREDS_FILE = 'nats.creds';
/** The runner container's uid/gid; the Secret volume is readable by this group and nobody else. */
const RUNNER_UID = 10001;

function commonLabels(d: DesiredRunner, component: string): Record<string, string> {
  return {
    [LABEL_RUNNER]: d.runnerId,
    [LABEL_RUNNER_UID]: d.uid,
    [LABEL_ORG]: d.organizationId,
    [LABEL_CLUSTER]: d.clusterId,
    [LABEL_COMPONENT]: component,
    [LABEL_MANAGED_BY]: MANAGED_BY_CONTROLLER,
    [LABELS.partOf]: 'paddock',
  };
}

function parseAffinity(json: string | undefined): unknown {
  if (!json) return undefined;
  try {
    const v: unknown = JSON.parse(json);
    // `{}` clears every rule (documented product behaviour): an empty affinity object is valid Kubernetes.
    return typeof v === 'object' && v !== null ? v : undefined;
  } catch {
    return undefined;
  }
}

function resources(d: DesiredRunner): Record<string, Record<string, string>> {
  const r = d.deploymentSpec.resources;
  const requests: Record<string, string> = {};
  const limits: Record<string, string> = {};
  if (r.cpuRequest) requests.cpu = r.cpuRequest;
  if (r.memoryRequest) requests.memory = r.memoryRequest;
  if (r.cpuLimit) limits.cpu = r.cpuLimit;
  if (r.memoryLimit) limits.memory = r.memoryLimit;
  return { ...(Object.keys(requests).length ? { requests } : {}), ...(Object.keys(limits).length ? { limits } : {}) };
}

/**
 * Every object a runner needs in its cluster, in apply order. Pure: the same desired runner always
 * yields the same objects, so re-applying is a no-op and drift is corrected by the next reconcile.
 */
export function buildRunnerObjects(d: DesiredRunner, opts: BuildOptions): KubeObject[] {
  const ns = runnerNamespace(d.runnerId);
  const sbNs = sandboxNamespace(d.runnerId);
  const name = runnerName(d.runnerId);
  const labels = commonLabels(d, 'runner');
  const spec = d.deploymentSpec;
  const podLabels = { ...spec.labels, ...labels };
  // Platform variables first, then the user's `spec.overrides.env` (sorted). Names are unique:
  // the apiserver refuses an apply with duplicate keys in a keyed list, and `deploymentSpec.env`
  // already carries the identity variables the builder sets, so a platform name is never taken
  // from the user's map (the platform value wins, as in the control plane's rendering). Platform
  // variables first also lets a user value reference them (`$(PADDOCK_RUNNER_ID)`): Kubernetes
  // only expands references to variables defined earlier in the list.
  const platformEnv = [
    { name: 'PADDOCK_RUNNER_ID', value: d.runnerId },
    { name: 'PADDOCK_ORGANIZATION_ID', value: d.organizationId },
    { name: 'PADDOCK_CLUSTER_ID', value: d.clusterId },
    { name: 'PADDOCK_ZONE', value: d.zone },
    { name: 'PADDOCK_RUNNER_GROUP_ID', value: d.runnerGroupId },
    { name: 'PADDOCK_RUNNER_BACKEND', value: 'kubernetes' },
    { name: 'PADDOCK_RUNNER_CONFIG', value: `${CONFIG_MOUNT}/${CONFIG_FILE}` },
    { name: 'PADDOCK_SANDBOX_NAMESPACE', value: sbNs },
    { name: 'NATS_URL', value: opts.natsUrl },
    // The path, never the content: a value in the environment is inherited by every child.
    ...(opts.natsCreds ? [{ name: 'NATS_CREDS', value: `${NATS_CREDS_MOUNT}/${NATS_CREDS_FILE}` }] : []),
  ];
  const platformNames = new Set(platformEnv.map((e) => e.name));
  const env = [
    ...platformEnv,
    ...Object.entries(spec.env)
      .filter(([k]) => !platformNames.has(k))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => ({ name: k, value: v })),
  ];
  const affinity = parseAffinity(spec.affinity);
  const deployment: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns, labels, annotations: { ...spec.annotations, [ANNOTATION_REVISION]: String(d.targetRevision) } },
    spec: {
      replicas: spec.scaling.replicas ?? 1,
      selector: { matchLabels: { [LABEL_RUNNER]: d.runnerId, [LABEL_COMPONENT]: 'runner' } },
      strategy: { type: 'Recreate' },
      template: {
        metadata: {
          labels: podLabels,
          // The revision annotation makes a rollout restart the pods; the policy does NOT: the
          // runner watches its mounted config file, and running sandboxes keep their spec.
          annotations: { ...spec.annotations, [ANNOTATION_REVISION]: String(d.targetRevision) },
        },
        spec: {
          serviceAccountName: name,
          automountServiceAccountToken: true,
          ...(Object.keys(spec.nodeSelector).length ? { nodeSelector: spec.nodeSelector } : {}),
          ...(spec.tolerations.length ? { tolerations: spec.tolerations } : {}),
          ...(affinity ? { affinity } : {}),
          securityContext: {
            runAsNonRoot: true,
            runAsUser: RUNNER_UID,
            runAsGroup: RUNNER_UID,
            ...(opts.natsCreds ? { fsGroup: RUNNER_UID } : {}),
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [
            {
              name: 'runner',
              image: d.targetImage,
              imagePullPolicy: spec.imagePullPolicy || 'IfNotPresent',
              args: spec.args,
              env,
              resources: resources(d),
              volumeMounts: [
                { name: 'config', mountPath: CONFIG_MOUNT, readOnly: true },
                ...(opts.natsCreds ? [{ name: 'nats-creds', mountPath: NATS_CREDS_MOUNT, readOnly: true }] : []),
              ],
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
            },
          ],
          // No subPath: a rotated Secret reaches a whole-volume mount (an atomic symlink swap).
          volumes: [
            { name: 'config', configMap: { name: runnerConfigMapName(d.runnerId) } },
            ...(opts.natsCreds ? [{ name: 'nats-creds', secret: { secretName: runnerNatsSecretName(d.runnerId), defaultMode: 0o440 } }] : []),
          ],
        },
      },
    },
  };
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels } },
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name: sbNs,
        labels: {
          ...commonLabels(d, 'sandboxes'),
          // Second, independent gate: even a bug in the pod builder cannot admit a privileged pod.
          'pod-security.kubernetes.io/enforce': 'restricted',
          'pod-security.kubernetes.io/enforce-version': 'latest',
          'pod-security.kubernetes.io/audit': 'restricted',
          'pod-security.kubernetes.io/warn': 'restricted',
        },
      },
    },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: ns, labels } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: runnerSandboxBindingName(d.runnerId), namespace: sbNs, labels },
      // The installed ClusterRole, bound here only: the runner gets its rules in its sandbox
      // namespace, and the controller needs only `bind` on that one name (see the contract).
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: RUNNER_SANDBOX_CLUSTER_ROLE },
      subjects: [{ kind: 'ServiceAccount', name, namespace: ns }],
    },
    ...(opts.natsCreds
      ? [
          {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: runnerNatsSecretName(d.runnerId), namespace: ns, labels },
            type: 'Opaque',
            data: { [NATS_CREDS_FILE]: Buffer.from(opts.natsCreds).toString('base64') },
          },
        ]
      : []),
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: runnerConfigMapName(d.runnerId), namespace: ns, labels },
      data: { [CONFIG_FILE]: `${JSON.stringify(runnerConfigOf(d), null, 2)}\n` },
    },
    deployment,
  ];
}

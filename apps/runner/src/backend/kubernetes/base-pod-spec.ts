import type { V1Affinity, V1Toleration } from '@kubernetes/client-node';
import type { FieldViolation } from '@paddock/contracts';
import { z } from 'zod';
import type { LaunchSpec } from '../sandbox-backend';
import { qualifiedNameProblem } from './pod-metadata';

/**
 * The runner policy's `base` pod-spec fragment (`base.podSpec`: every key of `base` besides its
 * metadata and containers) on the sandbox pod. Only placement is taken: which nodes may run the
 * pod and how the scheduler ranks it. Each taken field is checked against a closed schema of its
 * Kubernetes shape, so nothing unknown rides along inside it; every other field is refused by
 * name, because the pod's other fields are what keep it inside Pod Security `restricted` and the
 * sandbox away from the node (host namespaces, hostPath and other volumes, security contexts,
 * service accounts, runtime class) or are the runner's own (lifetime, restart policy, grace period).
 */

const Name = z.string().min(1).max(253).regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, 'a DNS subdomain');
const LabelValue = z.string().max(63).regex(/^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/, 'a label value');
const LabelKey = z.string().superRefine((k, ctx) => {
  const problem = qualifiedNameProblem(k);
  if (problem) ctx.addIssue({ code: 'custom', message: `label key ${JSON.stringify(k)}: ${problem}` });
});

const TolerationSchema = z.strictObject({
  key: z.string().optional(),
  operator: z.enum(['Exists', 'Equal']).optional(),
  value: z.string().optional(),
  effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
  tolerationSeconds: z.number().int().optional(),
});

const NodeSelectorRequirementSchema = z.strictObject({
  key: z.string().min(1),
  operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']),
  values: z.array(z.string()).optional(),
});
const NodeSelectorTermSchema = z.strictObject({
  matchExpressions: z.array(NodeSelectorRequirementSchema).optional(),
  matchFields: z.array(NodeSelectorRequirementSchema).optional(),
});
/** Node affinity only: pod (anti-)affinity would let a base place sandboxes by other tenants' pods. */
const AffinitySchema = z.strictObject({
  nodeAffinity: z
    .strictObject({
      requiredDuringSchedulingIgnoredDuringExecution: z.strictObject({ nodeSelectorTerms: z.array(NodeSelectorTermSchema).min(1) }).optional(),
      preferredDuringSchedulingIgnoredDuringExecution: z
        .array(z.strictObject({ weight: z.number().int().min(1).max(100), preference: NodeSelectorTermSchema }))
        .optional(),
    })
    .optional(),
});

/** The fields a base may set, each with its schema. */
const TAKEN = {
  tolerations: z.array(TolerationSchema),
  nodeSelector: z.record(LabelKey, LabelValue),
  affinity: AffinitySchema,
  schedulerName: Name,
  priorityClassName: Name,
} as const;
type Taken = keyof typeof TAKEN;
const isTaken = (k: string): k is Taken => Object.prototype.hasOwnProperty.call(TAKEN, k);

/** Why a refused field is refused, where there is more to say than "not placement". */
const REFUSED_BECAUSE: Record<string, string> = {
  hostNetwork: "host namespaces put the sandbox in the node's own (Pod Security restricted forbids them)",
  hostPID: "host namespaces put the sandbox in the node's own (Pod Security restricted forbids them)",
  hostIPC: "host namespaces put the sandbox in the node's own (Pod Security restricted forbids them)",
  hostUsers: 'the runner decides whether a sandbox runs in a user namespace',
  securityContext: "the sandbox pod's security context is the restricted one, the same for every sandbox",
  volumes: 'no container of the sandbox pod mounts a base volume (base sidecars are not run here), and a hostPath one would reach the node',
  serviceAccountName: "a sandbox pod runs with no service account token: a base's would give untrusted code an identity in the cluster",
  serviceAccount: "a sandbox pod runs with no service account token: a base's would give untrusted code an identity in the cluster",
  automountServiceAccountToken: 'a sandbox pod never mounts a service account token',
  runtimeClassName: 'the runtime class comes from the runner (its pinned or offered classes) and the policy, not the base',
  nodeName: 'naming a node bypasses the scheduler and its checks; select nodes with nodeSelector or affinity',
  containers: 'base sidecars are not run here (see base.containers)',
  initContainers: 'the sandbox pod runs only the sandbox\'s own init containers',
  ephemeralContainers: 'ephemeral containers are for debugging a running pod, never part of a sandbox',
  imagePullSecrets: "the runner's pull secrets are its configuration (PADDOCK_SANDBOX_IMAGE_PULL_SECRETS), the sandbox's its own pull credentials",
  activeDeadlineSeconds: "the sandbox's lifetime is the policy's, enforced by the runner",
  restartPolicy: 'a sandbox pod never restarts: its end is the sandbox\'s end',
  terminationGracePeriodSeconds: "stop's grace period is the caller's, applied by the runner",
  shareProcessNamespace: "sharing the pod's process namespace lets a sidecar see and signal the sandbox's processes",
  schedulingGates: 'a gate would hold the sandbox pod unscheduled with nothing to lift it',
};

/** Why the base's pod fields cannot go on the pod as written; empty when they can. */
export function basePodSpecViolations(spec: Pick<LaunchSpec, 'base'>, gpuNodeSelector: Record<string, string>): FieldViolation[] {
  const out: FieldViolation[] = [];
  // The resolved base names its sidecars and their amounts only: there is no image to run.
  if (spec.base?.containers.length) {
    out.push({ field: 'base.containers', rule: 'runner_capability', description: "the resolved base carries a sidecar's name and amounts only, not its image or command, so the Kubernetes backend cannot run it" });
  }
  for (const [key, value] of Object.entries(spec.base?.podSpec ?? {})) {
    const at = `base.${key}`;
    if (!isTaken(key)) {
      const why = REFUSED_BECAUSE[key] ?? 'only placement is taken from a base (tolerations, nodeSelector, affinity.nodeAffinity, schedulerName, priorityClassName)';
      out.push({ field: at, rule: 'runner_capability', description: `the Kubernetes backend does not take ${key} from the runner policy's base: ${why}` });
      continue;
    }
    const r = TAKEN[key].safeParse(value);
    if (!r.success) {
      for (const issue of r.error.issues) {
        out.push({ field: [at, ...issue.path.map(String)].join('.'), rule: 'pod_field_shape', description: issue.message });
      }
      continue;
    }
    if (key === 'nodeSelector') {
      for (const [k, v] of Object.entries(r.data as Record<string, string>)) {
        const gpu = gpuNodeSelector[k];
        if (gpu !== undefined && gpu !== v) {
          out.push({ field: `${at}[${JSON.stringify(k)}]`, rule: 'conflict', description: `the sandbox asks for ${k}=${gpu} (its GPU model); the base's ${v} would leave it unschedulable` });
        }
      }
    }
  }
  return out;
}

/** The pod fields the base sets (already checked by {@link basePodSpecViolations}). */
export interface BasePlacement {
  tolerations?: V1Toleration[];
  nodeSelector?: Record<string, string>;
  affinity?: V1Affinity;
  schedulerName?: string;
  priorityClassName?: string;
}

export function basePlacementOf(spec: Pick<LaunchSpec, 'base'>): BasePlacement {
  const podSpec = spec.base?.podSpec ?? {};
  const out: BasePlacement = {};
  const tolerations = TAKEN.tolerations.safeParse(podSpec.tolerations);
  if (tolerations.success) out.tolerations = tolerations.data;
  const nodeSelector = TAKEN.nodeSelector.safeParse(podSpec.nodeSelector);
  if (nodeSelector.success) out.nodeSelector = nodeSelector.data;
  const affinity = TAKEN.affinity.safeParse(podSpec.affinity);
  if (affinity.success) out.affinity = affinity.data;
  const scheduler = TAKEN.schedulerName.safeParse(podSpec.schedulerName);
  if (scheduler.success) out.schedulerName = scheduler.data;
  const priority = TAKEN.priorityClassName.safeParse(podSpec.priorityClassName);
  if (priority.success) out.priorityClassName = priority.data;
  return out;
}

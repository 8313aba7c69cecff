import type { InstallError, RunnerInstallStatus } from '@paddock/contracts';
import { ANNOTATION_REVISION } from '../builders/names';

/** The slice of cluster state the diagnosis reads (plain JSON as the API returns it). */
export interface ObservedDeployment {
  metadata?: { generation?: number; annotations?: Record<string, string> };
  spec?: { replicas?: number; template?: { metadata?: { annotations?: Record<string, string> } } };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

export interface ObservedPod {
  metadata?: { name?: string; annotations?: Record<string, string> };
  status?: {
    phase?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    containerStatuses?: {
      name: string;
      restartCount?: number;
      state?: { waiting?: { reason?: string; message?: string }; terminated?: { reason?: string; exitCode?: number } };
      lastState?: { terminated?: { reason?: string; exitCode?: number; message?: string } };
    }[];
  };
}

export interface ObservedNode {
  metadata?: { name?: string; labels?: Record<string, string> };
  spec?: { taints?: { key: string; value?: string; effect: string }[]; unschedulable?: boolean };
}

export interface ObservedRunner {
  deployment?: ObservedDeployment;
  pods: ObservedPod[];
  nodes: ObservedNode[];
  /** Warning events of the runner's namespace (ReplicaSet FailedCreate carries quota and RuntimeClass refusals). */
  warnings: { reason?: string; message?: string }[];
}

export interface Diagnosis {
  installStatus: RunnerInstallStatus;
  /** Set when the target revision is fully rolled out and available. */
  activeRevision?: number;
  installError?: InstallError;
  /**
   * The driver cannot tell yet (e.g. a restarted controller that has not heard the runner's first
   * heartbeat): nothing is reported, so the last reported status stands, and it looks again soon.
   */
  undetermined?: true;
}

const hint = {
  toleration: (key: string, value: string | undefined, effect: string): string =>
    `Add toleration for taint '${key}${value ? `=${value}` : ''}:${effect}'`,
};

/**
 * Parses the scheduler's "untolerated taint {key: value}" fragments, then finds the effect on the
 * nodes (the message does not carry it) to produce the seed's exact hint.
 */
function taintHints(message: string, nodes: ObservedNode[]): string[] {
  const hints = new Set<string>();
  for (const m of message.matchAll(/untolerated taint\(?s?\)? \{([^}]*)\}/g)) {
    const [rawKey, rawValue] = (m[1] ?? '').split(':').map((s) => s.trim());
    if (!rawKey) continue;
    const value = rawValue || undefined;
    const taint = nodes.flatMap((n) => n.spec?.taints ?? []).find((t) => t.key === rawKey && (t.value ?? undefined) === value);
    hints.add(hint.toleration(rawKey, value, taint?.effect ?? 'NoSchedule'));
  }
  return [...hints];
}

function failure(reason: string, message: string, hints: string[], detail: string, at: Date): Diagnosis {
  return {
    installStatus: 'RUNNER_INSTALL_STATUS_FAILED',
    installError: { reason, message, remediationHints: hints, diagnosticDetail: detail, occurredAt: at.toISOString() },
  };
}

/**
 * Turns what the cluster says about a runner's Deployment into its install status (pure).
 * Order matters: a concrete failure beats "still provisioning"; "ready" needs every replica of the
 * target revision available.
 */
export function diagnoseInstall(o: ObservedRunner, targetRevision: number, now: Date): Diagnosis {
  const dep = o.deployment;
  if (!dep) return { installStatus: 'RUNNER_INSTALL_STATUS_PROVISIONING' };
  const depRevision = Number(dep.spec?.template?.metadata?.annotations?.[ANNOTATION_REVISION] ?? NaN);
  const want = dep.spec?.replicas ?? 1;
  const st = dep.status ?? {};
  const rolledOut =
    depRevision === targetRevision &&
    (st.observedGeneration ?? 0) >= (dep.metadata?.generation ?? 0) &&
    (st.updatedReplicas ?? 0) >= want &&
    (st.availableReplicas ?? 0) >= want &&
    (st.replicas ?? 0) <= want;
  if (rolledOut) return { installStatus: 'RUNNER_INSTALL_STATUS_READY', activeRevision: targetRevision };

  for (const pod of o.pods) {
    const sched = pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
    if (sched?.reason === 'Unschedulable') {
      const msg = sched.message ?? '';
      const hints = taintHints(msg, o.nodes);
      if (/didn't match Pod's node affinity\/selector|node\(s\) didn't match/i.test(msg)) {
        hints.push('Check spec.overrides.node_selector and affinity: no node matches them');
      }
      if (hints.length === 0) hints.push('Check node capacity, taints and selectors for the runner pod');
      return failure('Unschedulable', `runner pod ${pod.metadata?.name ?? ''} cannot be scheduled: ${msg}`, hints, msg, now);
    }
    for (const cs of pod.status?.containerStatuses ?? []) {
      const waiting = cs.state?.waiting;
      if (waiting?.reason === 'ErrImagePull' || waiting?.reason === 'ImagePullBackOff' || waiting?.reason === 'InvalidImageName') {
        return failure(
          'ImagePullFailed',
          `runner image cannot be pulled: ${waiting.message ?? waiting.reason}`,
          ['Check that the release image exists and that the cluster can reach its registry (image pull secrets, egress)'],
          `${cs.name}: ${waiting.reason}: ${waiting.message ?? ''}`,
          now,
        );
      }
      if (waiting?.reason === 'CrashLoopBackOff') {
        const last = cs.lastState?.terminated;
        return failure(
          'CrashLoopBackOff',
          `runner container keeps crashing (restarts: ${cs.restartCount ?? 0}, last exit ${last?.exitCode ?? '?'})`,
          ['Inspect the runner logs (kubectl logs -n <runner namespace> deploy/<runner>) and check spec.overrides.env and args'],
          `${cs.name}: last termination ${last?.reason ?? ''} ${last?.message ?? ''}`.trim(),
          now,
        );
      }
    }
  }
  const replicaFailure = st.conditions?.find((c) => c.type === 'ReplicaFailure' && c.status === 'True');
  const texts = [replicaFailure?.message ?? '', ...o.warnings.map((w) => w.message ?? '')];
  for (const text of texts) {
    const rc = /RuntimeClass "([^"]+)" not found/.exec(text);
    if (rc) {
      return failure(
        'RuntimeClassNotFound',
        `runtime class "${rc[1]}" does not exist in the cluster`,
        [`Install the RuntimeClass "${rc[1]}" or change spec.overrides.cpu_runtime_class / gpu_runtime_class`],
        text,
        now,
      );
    }
    if (/exceeded quota/i.test(text)) {
      return failure(
        'QuotaExceeded',
        'a ResourceQuota refuses the runner pod',
        ['Raise the namespace ResourceQuota or lower spec.overrides.resources'],
        text,
        now,
      );
    }
  }
  const progressing = st.conditions?.find((c) => c.type === 'Progressing');
  if (progressing?.status === 'False' && progressing.reason === 'ProgressDeadlineExceeded') {
    return failure('ProgressDeadlineExceeded', progressing.message ?? 'the runner rollout did not progress', ['Describe the runner Deployment and its pods'], progressing.message ?? '', now);
  }
  return { installStatus: 'RUNNER_INSTALL_STATUS_PROVISIONING' };
}

import type { V1ContainerStateTerminated, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { SandboxState, SandboxStateReason } from '@paddock/contracts';

export interface ObservedState {
  state: SandboxState;
  reason?: SandboxStateReason;
  exitCode?: number;
  message?: string;
}

const IMAGE_PULL_FAILURES = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull']);

export const isTerminal = (s: SandboxState): boolean => s === 'STATE_COMPLETED' || s === 'STATE_FAILED';

/** The sandbox container's status: the pod's first container (sidecars follow it). */
function sandboxStatus(pod: V1Pod): V1ContainerStatus | undefined {
  const name = pod.spec?.containers[0]?.name;
  const all = pod.status?.containerStatuses ?? [];
  return all.find((c) => c.name === name) ?? all[0];
}

/** Whether the sandbox container's process is up (what exec, and so the launch files, need); its startup probe may still be running. */
export function sandboxContainerRunning(pod: V1Pod): boolean {
  return sandboxStatus(pod)?.state?.running !== undefined;
}

/**
 * Running, as the sandbox means it: the sandbox container is up and has passed its startup probe
 * (`started`, which the kubelet sets only then), and no sidecar is still waiting to start.
 */
function sandboxReady(pod: V1Pod): boolean {
  const main = sandboxStatus(pod);
  if (main?.state?.running === undefined || main.started === false) return false;
  return (pod.status?.containerStatuses ?? []).every((c) => c.state?.waiting === undefined);
}

/** The first init container that ended in failure, if one did. */
function failedInit(pod: V1Pod): { name: string; exitCode: number; message?: string } | undefined {
  for (const c of pod.status?.initContainerStatuses ?? []) {
    const t = c.state?.terminated ?? c.lastState?.terminated;
    if (t && t.exitCode !== 0) return { name: c.name, exitCode: t.exitCode, ...(t.message ? { message: t.message } : {}) };
  }
  return undefined;
}

/** The kubelet killed a sandbox container that never passed its startup probe. */
function startupProbeFailed(pod: V1Pod, container: V1ContainerStatus | undefined): boolean {
  return pod.spec?.containers[0]?.startupProbe !== undefined && container?.started !== true && container?.state?.terminated !== undefined;
}

/** The sandbox's end from its own container's exit: the primary's exit ends the sandbox, whatever its sidecars do. */
function exitedState(pod: V1Pod, terminated: V1ContainerStateTerminated): ObservedState {
  if (terminated.reason === 'OOMKilled') return { state: 'STATE_FAILED', reason: 'OUT_OF_MEMORY', exitCode: terminated.exitCode };
  if (startupProbeFailed(pod, sandboxStatus(pod))) {
    return { state: 'STATE_FAILED', reason: 'STARTUP_PROBE_FAILED', exitCode: terminated.exitCode, message: 'the startup probe did not pass within its failure threshold' };
  }
  if (terminated.exitCode === 0) return { state: 'STATE_COMPLETED', reason: 'EXITED', exitCode: 0 };
  return { state: 'STATE_FAILED', reason: 'EXITED', exitCode: terminated.exitCode, ...msg(terminated.message) };
}

/** Maps a pod's phase and container states to a sandbox state and reason. Pure. */
export function observePod(pod: V1Pod): ObservedState {
  const status = pod.status;
  const container = sandboxStatus(pod);
  const terminated = container?.state?.terminated ?? container?.lastState?.terminated;
  const waiting = container?.state?.waiting;
  const init = failedInit(pod);
  switch (status?.phase) {
    case 'Succeeded':
      return { state: 'STATE_COMPLETED', reason: 'EXITED', exitCode: terminated?.exitCode ?? 0 };
    case 'Failed': {
      if (status.reason === 'DeadlineExceeded') return { state: 'STATE_FAILED', reason: 'LIFETIME_EXPIRED', ...msg(status.message) };
      if (status.reason === 'Evicted') return { state: 'STATE_FAILED', reason: 'EVICTED', ...msg(status.message) };
      if (init) return initFailed(init);
      if (terminated) return exitedState(pod, terminated);
      return { state: 'STATE_FAILED', reason: 'EXITED', exitCode: 1 };
    }
    case 'Running':
      if (pod.metadata?.deletionTimestamp) return { state: 'STATE_TERMINATING' };
      // Sidecars may outlive the sandbox container; its exit is the sandbox's end all the same.
      if (container?.state?.terminated) return exitedState(pod, container.state.terminated);
      return sandboxReady(pod) ? { state: 'STATE_RUNNING' } : { state: 'STATE_CREATING' };
    case undefined:
    default:
      if (init) return initFailed(init);
      if (waiting?.reason && IMAGE_PULL_FAILURES.has(waiting.reason)) {
        return { state: 'STATE_FAILED', reason: 'IMAGE_NOT_FOUND', ...msg(waiting.message ?? waiting.reason) };
      }
      return pod.metadata?.deletionTimestamp ? { state: 'STATE_TERMINATING' } : { state: 'STATE_CREATING' };
  }
}

function initFailed(init: { name: string; exitCode: number; message?: string }): ObservedState {
  return {
    state: 'STATE_FAILED',
    reason: 'INIT_CONTAINER_FAILED',
    exitCode: init.exitCode,
    message: `init container ${init.name} exited with status ${String(init.exitCode)}${init.message ? `: ${init.message}` : ''}`,
  };
}

const msg = (m: string | undefined): { message?: string } => (m ? { message: m } : {});

/** When the sandbox of a pod started, and when the pod's `activeDeadlineSeconds` ends it. */
export function podTimes(pod: V1Pod): { startedAt: Date; deadline: Date } {
  const startedAt = new Date(pod.status?.startTime ?? pod.metadata?.creationTimestamp ?? new Date());
  return { startedAt, deadline: new Date(startedAt.getTime() + (pod.spec?.activeDeadlineSeconds ?? 0) * 1000) };
}

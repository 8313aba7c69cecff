import type { V1Pod } from '@kubernetes/client-node';
import type { SandboxState, SandboxStateReason } from '@paddock/contracts';

export interface ObservedState {
  state: SandboxState;
  reason?: SandboxStateReason;
  exitCode?: number;
  message?: string;
}

const IMAGE_PULL_FAILURES = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull']);

export const isTerminal = (s: SandboxState): boolean => s === 'STATE_COMPLETED' || s === 'STATE_FAILED';

/** Maps a pod's phase and container states to a sandbox state and reason. Pure. */
export function observePod(pod: V1Pod): ObservedState {
  const status = pod.status;
  const container = status?.containerStatuses?.[0];
  const terminated = container?.state?.terminated ?? container?.lastState?.terminated;
  const waiting = container?.state?.waiting;
  switch (status?.phase) {
    case 'Succeeded':
      return { state: 'STATE_COMPLETED', reason: 'EXITED', exitCode: terminated?.exitCode ?? 0 };
    case 'Failed': {
      if (status.reason === 'DeadlineExceeded') return { state: 'STATE_FAILED', reason: 'LIFETIME_EXPIRED', ...msg(status.message) };
      if (status.reason === 'Evicted') return { state: 'STATE_FAILED', reason: 'EVICTED', ...msg(status.message) };
      if (terminated?.reason === 'OOMKilled') return { state: 'STATE_FAILED', reason: 'OUT_OF_MEMORY', exitCode: terminated.exitCode };
      return { state: 'STATE_FAILED', reason: 'EXITED', exitCode: terminated?.exitCode ?? 1, ...msg(terminated?.message) };
    }
    case 'Running':
      return pod.metadata?.deletionTimestamp ? { state: 'STATE_TERMINATING' } : { state: 'STATE_RUNNING' };
    case undefined:
    default:
      if (waiting?.reason && IMAGE_PULL_FAILURES.has(waiting.reason)) {
        return { state: 'STATE_FAILED', reason: 'IMAGE_NOT_FOUND', ...msg(waiting.message ?? waiting.reason) };
      }
      return pod.metadata?.deletionTimestamp ? { state: 'STATE_TERMINATING' } : { state: 'STATE_CREATING' };
  }
}

const msg = (m: string | undefined): { message?: string } => (m ? { message: m } : {});

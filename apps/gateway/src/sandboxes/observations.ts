import { SANDBOX_STATE_RANK, type SandboxStatus, type SandboxStateEvent } from '@paddock/contracts';
import type { RunnerObservation } from './sandbox.repository';

/** The `effective*` echoes of a runner's sandbox status, and its containers' states, stored as-is. */
function effectiveOf(sb: { status: SandboxStatus }): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(sb.status)) if ((k.startsWith('effective') || k === 'containerStatuses') && v !== undefined) out[k] = v;
  return Object.keys(out).length ? out : undefined;
}

/** A runner's view of a sandbox (only its status is read). */
export function observationFromSandbox(sb: { status: SandboxStatus }): RunnerObservation {
  const s = sb.status;
  const at = s.endTime ?? s.startTime ?? s.createTime;
  return {
    state: s.state,
    rank: SANDBOX_STATE_RANK[s.state],
    reason: s.stateReason,
    message: s.message,
    exitCode: s.exitCode,
    sequence: 0,
    at: new Date(at),
    effective: effectiveOf(sb),
  };
}

export function observationFromEvent(e: SandboxStateEvent): RunnerObservation {
  return {
    state: e.state,
    rank: SANDBOX_STATE_RANK[e.state],
    reason: e.reason,
    message: e.message,
    exitCode: e.exitCode,
    sequence: e.sequence,
    at: new Date(e.at),
    ...(e.containerStatuses ? { containerStatuses: e.containerStatuses } : {}),
  };
}

import {
  isTerminalSandboxState,
  SANDBOX_STATE_RANK,
  type Sandbox,
  type SandboxEffectiveFields,
  type SandboxSpec,
  type SandboxState,
  type SandboxStateReason,
} from '@paddock/contracts';

/**
 * What the runner knows of one sandbox it owns. Pure data plus pure transitions.
 *
 * Invariants:
 * - state only moves forward: PENDING → CREATING → RUNNING → TERMINATING → COMPLETED | FAILED,
 *   except RUNNING ⇄ PAUSED (pause and resume), which may repeat
 *   (steps may be skipped, e.g. CREATING → FAILED or RUNNING → COMPLETED); a late or duplicate
 *   backend event that would move it backwards or out of a terminal state is ignored;
 * - a terminal record always has a `stateReason` and an `endTime`;
 * - `sequence` grows with every accepted transition, across runner restarts too (clock-derived).
 */
export interface SandboxRecord {
  sandboxId: string;
  organizationId: string;
  spec: SandboxSpec;
  labels: Record<string, string>;
  effective: SandboxEffectiveFields;
  /** Canonical JSON of what the create asked for: a redelivered create must match it exactly. */
  requestFingerprint: string;
  state: SandboxState;
  stateReason?: SandboxStateReason;
  message?: string;
  exitCode?: number;
  createTime: Date;
  startTime?: Date;
  endTime?: Date;
  sequence: number;
  /** Reserved capacity (the sandbox's requests), released when the sandbox reaches a terminal state. */
  allocation: { cpuMillis: number; memoryBytes: number };
  /** Hard deadline from the lifetime resolved at launch. */
  deadline: Date;
  /** DeleteSandboxLogs ran: log reads answer CWSANDBOX_LOGS_DELETED. */
  logsDeleted?: boolean;
  /** Since when it is PAUSED: the lifetime does not run meanwhile (the deadline moves on resume). */
  pausedAt?: Date;
}

export interface StateChange {
  state: SandboxState;
  reason?: SandboxStateReason;
  message?: string;
  exitCode?: number;
  at: Date;
}

/** Next event sequence: microseconds of the clock, or one past the previous if the clock lags. */
export function nextSequence(previous: number, now: Date): number {
  return Math.max(previous + 1, now.getTime() * 1000);
}

/** The reason a terminal state gets when the backend did not say. */
function defaultReason(from: SandboxState, to: SandboxState): SandboxStateReason {
  if (to === 'STATE_COMPLETED') return 'EXITED';
  return from === 'STATE_PENDING' || from === 'STATE_CREATING' ? 'FAILED_TO_START' : 'EXITED';
}

/**
 * Applies a state change. Returns the new record, or `undefined` when the change is stale (not
 * forward) and must be ignored. Staying in TERMINATING or another non-terminal state is a no-op.
 */
export function applyStateChange(rec: SandboxRecord, change: StateChange): SandboxRecord | undefined {
  if (isTerminalSandboxState(rec.state)) return undefined;
  const toggle = isPauseToggle(rec.state, change.state);
  if (!toggle && SANDBOX_STATE_RANK[change.state] <= SANDBOX_STATE_RANK[rec.state]) {
    // The progress of a creation (an image pull) updates its message, the state stays.
    const progress = change.state === 'STATE_CREATING' && rec.state === 'STATE_CREATING' && change.message !== undefined && change.message !== rec.message;
    return progress ? { ...rec, message: change.message as string, sequence: nextSequence(rec.sequence, change.at) } : undefined;
  }
  const next: SandboxRecord = { ...rec, state: change.state, sequence: nextSequence(rec.sequence, change.at) };
  if (change.state === 'STATE_PAUSED') next.pausedAt = change.at;
  if (rec.state === 'STATE_PAUSED') {
    // Resumed (or stopped while paused): the paused stretch is added to the lifetime.
    next.deadline = new Date(rec.deadline.getTime() + Math.max(0, change.at.getTime() - (rec.pausedAt ?? change.at).getTime()));
    delete next.pausedAt;
    if (change.state === 'STATE_RUNNING') delete next.stateReason;
  }
  if (change.reason !== undefined) next.stateReason = change.reason;
  if (change.message !== undefined) next.message = change.message;
  if (change.exitCode !== undefined) next.exitCode = change.exitCode;
  if (change.state === 'STATE_RUNNING' && rec.state !== 'STATE_PAUSED') next.startTime = change.at;
  if (isTerminalSandboxState(change.state)) {
    next.endTime = change.at;
    // A stop requested by the user or by the lifetime keeps that reason even if the backend only
    // reports the exit (or the kill) that followed.
    const requested = rec.state === 'STATE_TERMINATING' ? rec.stateReason : undefined;
    next.stateReason = requested ?? change.reason ?? defaultReason(rec.state, change.state);
  }
  return next;
}

/** RUNNING → PAUSED and back: the one move between states of equal rank. */
export function isPauseToggle(from: SandboxState, to: SandboxState): boolean {
  return (from === 'STATE_RUNNING' && to === 'STATE_PAUSED') || (from === 'STATE_PAUSED' && to === 'STATE_RUNNING');
}

/** The CPU a record holds on the runner: none while paused (its frozen processes use none). */
export function heldCpuMillis(rec: SandboxRecord): number {
  return rec.state === 'STATE_PAUSED' ? 0 : rec.allocation.cpuMillis;
}

/** Whether a record still holds capacity on the runner. */
export function holdsCapacity(rec: SandboxRecord): boolean {
  return !isTerminalSandboxState(rec.state);
}

/** The resource as the gateway and SDK show it. */
export function toSandbox(rec: SandboxRecord, runner: { runnerId: string; runnerGroupId: string }): Sandbox {
  return {
    sandboxId: rec.sandboxId,
    organizationId: rec.organizationId,
    spec: rec.spec,
    labels: rec.labels,
    status: {
      ...rec.effective,
      state: rec.state,
      ...(rec.stateReason !== undefined ? { stateReason: rec.stateReason } : {}),
      ...(rec.message !== undefined ? { message: rec.message } : {}),
      ...(rec.exitCode !== undefined ? { exitCode: rec.exitCode } : {}),
      runnerId: runner.runnerId,
      runnerGroupId: runner.runnerGroupId,
      createTime: rec.createTime.toISOString(),
      ...(rec.startTime ? { startTime: rec.startTime.toISOString() } : {}),
      ...(rec.endTime ? { endTime: rec.endTime.toISOString() } : {}),
    },
  };
}

/** Deterministic JSON (sorted keys) so two equal requests fingerprint the same. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    return v;
  });
}

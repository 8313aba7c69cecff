import type { RunnerConnectionStatus, RunnerInstallReport, WarmPoolStatus } from '@paddock/contracts';

export interface RunnerConnectionState {
  organizationId: string;
  runnerId: string;
  connectionStatus: RunnerConnectionStatus;
  lastHeartbeatTime: Date | null;
}

export interface HeartbeatObservation {
  revision: number;
  policyEtag: string | null;
  usingDefaultPolicy: boolean;
  /** Each warm pool's size and ready count, as the runner reports them. */
  warmPoolStatus?: WarmPoolStatus[];
}

/** What the NATS intake needs from the runners module (bound in runners-bridge.ts). */
export abstract class IntakeRunners {
  /** Records the heartbeat on the runner's row; false when no such runner exists. */
  abstract touchHeartbeat(organizationId: string, runnerId: string, at: Date, observed: HeartbeatObservation): Promise<boolean>;
  abstract listConnectionStates(): Promise<RunnerConnectionState[]>;
  /** Records a connection change; false when the runner already had that status (or is gone). */
  abstract recordConnection(organizationId: string, runnerId: string, status: RunnerConnectionStatus, at: Date): Promise<boolean>;
  abstract applyInstallReport(report: RunnerInstallReport): Promise<void>;
}

/** Payload published on `subjects.runnerConnection(runnerId)` when the control plane sees a transition. */
export interface RunnerConnectionNotice {
  organizationId: string;
  runnerId: string;
  connectionStatus: RunnerConnectionStatus;
  at: string;
}

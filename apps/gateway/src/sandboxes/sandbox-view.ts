import type { Selectable } from 'kysely';
import { isTerminalSandboxState, type SandboxState } from '@paddock/contracts';
import type { GwSandboxesTable, PlacementRecord } from '../db/database';

export type SandboxRow = Selectable<GwSandboxesTable>;

/** The `Sandbox` resource as the gateway shows it plus `status.placement`. */
export interface SandboxView {
  sandboxId: string;
  spec: unknown;
  status: {
    state: string;
    stateReason?: string;
    message?: string;
    exitCode?: number;
    runnerId: string;
    runnerGroupId: string;
    createTime: string;
    startTime?: string;
    endTime?: string;
    placement: PlacementRecord;
    [effective: string]: unknown;
  };
}

const iso = (d: Date | string | null): string | undefined => (d === null ? undefined : new Date(d).toISOString());

export function toView(row: SandboxRow): SandboxView {
  const effective = (row.effective ?? {});
  return {
    sandboxId: row.id,
    spec: row.spec,
    status: {
      ...effective,
      state: row.state,
      ...(row.state_reason ? { stateReason: row.state_reason } : {}),
      ...(row.message ? { message: row.message } : {}),
      ...(row.exit_code !== null ? { exitCode: row.exit_code } : {}),
      runnerId: row.runner_id,
      runnerGroupId: row.runner_group_id,
      createTime: new Date(row.create_time).toISOString(),
      ...(row.start_time ? { startTime: iso(row.start_time) } : {}),
      ...(row.end_time ? { endTime: iso(row.end_time) } : {}),
      placement: row.placement,
    },
  };
}

export function isTerminalRow(row: SandboxRow): boolean {
  return isTerminalSandboxState(row.state as SandboxState);
}

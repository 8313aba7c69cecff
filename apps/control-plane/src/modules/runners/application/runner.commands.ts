import { Command } from '@nestjs/cqrs';
import type { ManagedRunner, ProfileTemplate, RunnerConnectionStatus, RunnerInstallReport } from '@paddock/contracts';
import type { Caller } from '../../identity';

/** Who asked, for event metadata and org scoping. */
export interface CommandOrigin {
  organizationId: string;
  actor: string;
  requestId?: string;
}

/** Create from a raw v1 body (validated by the handler). */
export class CreateManagedRunnerCommand extends Command<ManagedRunner> {
  constructor(
    readonly caller: Caller,
    readonly body: unknown,
    readonly query: { requestId?: string; runnerId?: string },
  ) {
    super();
  }
}

/** v1 PATCH: the runner body plus the raw `updateMask` query value. */
export class UpdateManagedRunnerCommand extends Command<ManagedRunner> {
  constructor(
    readonly caller: Caller,
    readonly runnerRef: string,
    readonly body: unknown,
    readonly updateMask: string | undefined,
  ) {
    super();
  }
}

/** v1 DELETE; resolves to the runner in DELETING, or null when absent and `allowMissing`. */
export class DeleteManagedRunnerCommand extends Command<ManagedRunner | null> {
  constructor(
    readonly caller: Caller,
    readonly runnerRef: string,
    readonly allowMissing: boolean,
  ) {
    super();
  }
}

/**
 * Raise `targetRevision` to the newest release of the runner's channel. Sent by the API
 * (`trigger: 'user'`) and by the maintenance scheduler (`trigger: 'maintenance'`).
 */
export class ApplyAvailableUpdateCommand extends Command<ManagedRunner> {
  constructor(readonly payload: { organizationId: string; runnerId: string; trigger: 'user' | 'maintenance'; actor: string }) {
    super();
  }
}

/** A controller's install report (from NATS intake). Stale fencing tokens are ignored. */
export class ApplyInstallReportCommand extends Command<void> {
  constructor(readonly report: RunnerInstallReport) {
    super();
  }
}

/** A connection-status transition derived from heartbeats; resolves true when it was recorded. */
export class RecordRunnerConnectionCommand extends Command<boolean> {
  constructor(readonly payload: { organizationId: string; runnerId: string; status: RunnerConnectionStatus; at: Date }) {
    super();
  }
}

/** Legacy v1beta2 PATCH body `{ runner: {...}, updateMask }`. */
export class UpdateLegacyRunnerCommand extends Command<Record<string, unknown>> {
  constructor(
    readonly caller: Caller,
    readonly runnerRef: string,
    readonly body: unknown,
    readonly updateMaskQuery: string | undefined,
  ) {
    super();
  }
}

/** Legacy v1beta2 profile template creation. */
export class CreateProfileTemplateCommand extends Command<ProfileTemplate> {
  constructor(
    readonly caller: Caller,
    readonly body: unknown,
  ) {
    super();
  }
}

import { Command } from '@nestjs/cqrs';
import type { ManagedRunner, ProfileTemplate, ProfileTemplateInput, RunnerConnectionStatus, RunnerInstallReport } from '@paddock/contracts';
import type { Caller } from '../../identity';
import type { MaskPlan } from '../domain/update-mask';
import type { LegacyUpdateInput } from './legacy-input';
import type { CreateRunnerInput, UpdateRunnerInput } from './runner-input';

/** Who asked, for event metadata and org scoping. */
export interface CommandOrigin {
  organizationId: string;
  actor: string;
  requestId?: string;
}

/**
 * Create, from a v1 body already parsed (`parseCreateRunner`): commands carry domain input, so a
 * handler never sees the wire format and other senders need no HTTP body.
 */
export class CreateManagedRunnerCommand extends Command<ManagedRunner> {
  constructor(
    readonly caller: Caller,
    readonly input: CreateRunnerInput,
  ) {
    super();
  }
}

/** v1 PATCH: the parsed update mask and the members of the body it covers. */
export class UpdateManagedRunnerCommand extends Command<ManagedRunner> {
  constructor(
    readonly caller: Caller,
    readonly runnerRef: string,
    readonly plan: MaskPlan,
    readonly input: UpdateRunnerInput,
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

/** Legacy v1beta2 PATCH, parsed (`parseLegacyUpdate`): the settings its mask covers. */
export class UpdateLegacyRunnerCommand extends Command<Record<string, unknown>> {
  constructor(
    readonly caller: Caller,
    readonly runnerRef: string,
    readonly input: LegacyUpdateInput,
  ) {
    super();
  }
}

/** Legacy v1beta2 profile template creation, from a parsed template (`parseProfileTemplate`). */
export class CreateProfileTemplateCommand extends Command<ProfileTemplate> {
  constructor(
    readonly caller: Caller,
    readonly template: ProfileTemplateInput,
  ) {
    super();
  }
}

import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Clock } from '../../../infrastructure/tokens';
import { RunnerReadRepository } from '../projections/runner-read.repository';
import { eventMetadata } from './event-metadata';
import { ApplyInstallReportCommand } from './runner.commands';
import { RunnerWriter } from './runner-writer';

/** Folds a controller's install report into the runner stream (stale fencing tokens ignored). */
@CommandHandler(ApplyInstallReportCommand)
export class ApplyInstallReportHandler implements ICommandHandler<ApplyInstallReportCommand> {
  constructor(
    private readonly writer: RunnerWriter,
    private readonly repo: RunnerReadRepository,
    private readonly clock: Clock,
  ) {}

  async execute({ report }: ApplyInstallReportCommand): Promise<void> {
    const row = await this.repo.findByRef(report.organizationId, report.runnerId);
    // Reports about runners that no longer exist are late duplicates: nothing to do.
    if (!row) return;
    const now = this.clock.now();
    await this.writer.execute(
      row.uid,
      { type: 'ApplyInstallReport', data: { report, now } },
      eventMetadata(report.organizationId, `controller:${report.controllerId}`, now),
    );
  }
}

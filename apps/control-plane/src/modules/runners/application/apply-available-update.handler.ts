import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { ManagedRunner, StoredRunnerSpec } from '@paddock/contracts';
import { Clock } from '../../../infrastructure/tokens';
import { ReleaseCatalog } from '../../releases';
import { eventMetadata } from './event-metadata';
import { ApplyAvailableUpdateCommand } from './runner.commands';
import { RunnerQueries } from './runner-queries';
import { RunnerWriter } from './runner-writer';

/** Raises targetRevision to the newest release of the runner's channel (user or maintenance). */
@CommandHandler(ApplyAvailableUpdateCommand)
export class ApplyAvailableUpdateHandler implements ICommandHandler<ApplyAvailableUpdateCommand> {
  constructor(
    private readonly writer: RunnerWriter,
    private readonly queries: RunnerQueries,
    private readonly releases: ReleaseCatalog,
    private readonly clock: Clock,
  ) {}

  async execute({ payload }: ApplyAvailableUpdateCommand): Promise<ManagedRunner> {
    const { organizationId, runnerId, trigger, actor } = payload;
    const row = await this.queries.rowOf(organizationId, runnerId);
    const latest = await this.releases.latest((row.spec as StoredRunnerSpec).releaseChannel);
    const now = this.clock.now();
    await this.writer.execute(
      row.uid,
      { type: 'RequestRunnerUpdate', data: { runnerRef: runnerId, latest: { revision: latest.revision, version: latest.version, image: latest.image }, trigger, now } },
      eventMetadata(organizationId, actor, now),
    );
    return this.queries.get(organizationId, row.uid);
  }
}

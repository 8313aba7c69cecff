import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { RunnerReadRepository } from '../projections/runner-read.repository';
import { eventMetadata } from './event-metadata';
import { RecordRunnerConnectionCommand } from './runner.commands';
import { RunnerWriter } from './runner-writer';

/** Records a connection-status transition derived from heartbeats (steady state records nothing). */
@CommandHandler(RecordRunnerConnectionCommand)
export class RecordRunnerConnectionHandler implements ICommandHandler<RecordRunnerConnectionCommand> {
  constructor(
    private readonly writer: RunnerWriter,
    private readonly repo: RunnerReadRepository,
  ) {}

  async execute({ payload }: RecordRunnerConnectionCommand): Promise<boolean> {
    const row = await this.repo.findByRef(payload.organizationId, payload.runnerId);
    if (!row || row.connection_status === payload.status) return false;
    const outcome = await this.writer.execute(
      row.uid,
      { type: 'RecordRunnerConnection', data: { status: payload.status, at: payload.at } },
      eventMetadata(payload.organizationId, 'system:heartbeat-monitor', payload.at),
    );
    return outcome.events.length > 0;
  }
}

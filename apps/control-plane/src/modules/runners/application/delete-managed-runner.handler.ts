import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { PaddockError, type ManagedRunner } from '@paddock/contracts';
import { Clock } from '../../../infrastructure/tokens';
import { eventMetadata } from './event-metadata';
import { DeleteManagedRunnerCommand } from './runner.commands';
import { RunnerQueries } from './runner-queries';
import { RunnerWriter } from './runner-writer';

/** Deletion is asynchronous: DELETING now, removal when the controller reports `gone`. */
@CommandHandler(DeleteManagedRunnerCommand)
export class DeleteManagedRunnerHandler implements ICommandHandler<DeleteManagedRunnerCommand> {
  constructor(
    private readonly writer: RunnerWriter,
    private readonly queries: RunnerQueries,
    private readonly clock: Clock,
  ) {}

  async execute({ caller, runnerRef, allowMissing }: DeleteManagedRunnerCommand): Promise<ManagedRunner | null> {
    const org = caller.organizationId;
    try {
      const row = await this.queries.rowOf(org, runnerRef);
      const now = this.clock.now();
      await this.writer.execute(row.uid, { type: 'RequestRunnerDeletion', data: { runnerRef, now } }, eventMetadata(org, caller.actor, now));
      return (await this.queries.getByUid(row.uid)) ?? null;
    } catch (e) {
      if (allowMissing && e instanceof PaddockError && e.code === 'not_found') return null;
      throw e;
    }
  }
}

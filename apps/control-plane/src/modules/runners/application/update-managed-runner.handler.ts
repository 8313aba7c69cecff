import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { PaddockError, type ManagedRunner } from '@paddock/contracts';
import { Clock } from '../../../infrastructure/tokens';
import { eventMetadata } from './event-metadata';
import { UpdateManagedRunnerCommand } from './runner.commands';
import { runnerNotFound } from './runner-queries';
import { toManagedRunner } from './runner-resource';
import { RunnerWriter } from './runner-writer';

@CommandHandler(UpdateManagedRunnerCommand)
export class UpdateManagedRunnerHandler implements ICommandHandler<UpdateManagedRunnerCommand> {
  constructor(
    private readonly writer: RunnerWriter,
    private readonly clock: Clock,
  ) {}

  async execute({ caller, runnerRef, plan, input }: UpdateManagedRunnerCommand): Promise<ManagedRunner> {
    const org = caller.organizationId;
    const now = this.clock.now();
    const outcome = await this.writer.executeByRef(
      org,
      runnerRef,
      (row) => {
        if (row && input.bodyRunnerId !== undefined && input.bodyRunnerId !== row.runner_id && input.bodyRunnerId !== row.uid) {
          const description = `runner.identity.runner_id "${input.bodyRunnerId.slice(0, 100)}" does not match the runner in the path (${row.runner_id}); the runner id is immutable`;
          throw new PaddockError('invalid_argument', description, {
            reason: 'PADDOCK_IMMUTABLE_FIELD',
            violations: [{ field: 'runner.identity.runner_id', rule: 'immutable', description }],
          });
        }
        return {
          type: 'UpdateRunnerSettings',
          data: { runnerRef, settings: input.settings, paths: plan.paths, ...(input.policy ? { policy: input.policy } : {}), now },
        };
      },
      eventMetadata(org, caller.actor, now),
    );
    // The row the write returned is what a GET would read now: no second read.
    if (!outcome?.row) throw runnerNotFound(runnerRef);
    return toManagedRunner(outcome.row, outcome.row.latest_revision);
  }
}

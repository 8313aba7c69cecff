import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { PaddockError, type ManagedRunner } from '@paddock/contracts';
import { Clock } from '../../../infrastructure/tokens';
import { parseUpdateMask } from '../domain/update-mask';
import { eventMetadata } from './event-metadata';
import { UpdateManagedRunnerCommand } from './runner.commands';
import { parseUpdateRunner } from './runner-input';
import { RunnerQueries } from './runner-queries';
import { RunnerWriter } from './runner-writer';

@CommandHandler(UpdateManagedRunnerCommand)
export class UpdateManagedRunnerHandler implements ICommandHandler<UpdateManagedRunnerCommand> {
  constructor(
    private readonly writer: RunnerWriter,
    private readonly queries: RunnerQueries,
    private readonly clock: Clock,
  ) {}

  async execute({ caller, runnerRef, body, updateMask }: UpdateManagedRunnerCommand): Promise<ManagedRunner> {
    const plan = parseUpdateMask(updateMask);
    const input = parseUpdateRunner(body, plan);
    const org = caller.organizationId;
    const row = await this.queries.rowOf(org, runnerRef);
    if (input.bodyRunnerId !== undefined && input.bodyRunnerId !== row.runner_id && input.bodyRunnerId !== row.uid) {
      const description = `runner.identity.runner_id "${input.bodyRunnerId.slice(0, 100)}" does not match the runner in the path (${row.runner_id}); the runner id is immutable`;
      throw new PaddockError('invalid_argument', description, {
        reason: 'PADDOCK_IMMUTABLE_FIELD',
        violations: [{ field: 'runner.identity.runner_id', rule: 'immutable', description }],
      });
    }
    const now = this.clock.now();
    await this.writer.execute(
      row.uid,
      {
        type: 'UpdateRunnerSettings',
        data: { runnerRef, settings: input.settings, paths: plan.paths, ...(input.policy ? { policy: input.policy } : {}), now },
      },
      eventMetadata(org, caller.actor, now),
    );
    return this.queries.get(org, row.uid);
  }
}

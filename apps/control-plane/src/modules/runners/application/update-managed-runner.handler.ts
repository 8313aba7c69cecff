import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { PaddockError, type ManagedRunner, type StoredRunnerSpec } from '@paddock/contracts';
import { Clock } from '../../../infrastructure/tokens';
import { eventMetadata } from './event-metadata';
import { UpdateManagedRunnerCommand } from './runner.commands';
import { runnerNotFound } from './runner-queries';
import { toManagedRunner } from './runner-resource';
import { RunnerWriter } from './runner-writer';
import { warmPoolViolations } from './policy-port';
import type { UpdateRunnerInput } from './runner-input';

/**
 * The warm pools the runner will have after this update, checked against the policy it will have
 * (the one in the body when the update replaces it, else the stored one): a template that policy
 * would refuse is refused here, naming the constraint, instead of failing quietly on the runner.
 */
function refuseWarmPoolsThePolicyRefuses(row: { spec: unknown; policy: unknown }, input: UpdateRunnerInput): void {
  const stored = row.spec as StoredRunnerSpec;
  const pools = input.settings.spec && 'warmPools' in input.settings.spec ? (input.settings.spec.warmPools ?? []) : (stored.warmPools ?? []);
  if (pools.length === 0) return;
  const policy = input.policy?.document !== undefined && input.policy.document !== null ? input.policy.document : ((row.policy ?? null) as Record<string, unknown> | null);
  const violations = warmPoolViolations(pools, policy);
  if (violations.length > 0) {
    throw new PaddockError('invalid_argument', violations[0]?.description ?? 'a warm pool template violates the runner policy', { reason: 'PADDOCK_VALIDATION_FAILED', violations });
  }
}

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
        if (row) refuseWarmPoolsThePolicyRefuses(row, input);
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

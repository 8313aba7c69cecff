import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { FieldViolation, ProfileBinding } from '@paddock/contracts';
import { Clock } from '../../../infrastructure/tokens';
import type { ProfileTemplateVerdict } from '../domain/runner.commands';
import { ProfileTemplateRepository } from '../projections/profile-template.repository';
import { eventMetadata } from './event-metadata';
import { legacyInvalid } from './legacy-input';
import { privilegedTemplateFields } from './policy-port';
import { UpdateLegacyRunnerCommand } from './runner.commands';
import { RunnerQueries } from './runner-queries';
import { RunnerWriter } from './runner-writer';

/**
 * Legacy `PATCH /v1beta2/sandbox/managed-runners/{id}`: the wrapped body `{runner, updateMask}`.
 * Paddock serves the two settings that exist only there (the privileged-profile flag and profile
 * bindings); everything else is managed on v1.
 */
@CommandHandler(UpdateLegacyRunnerCommand)
export class UpdateLegacyRunnerHandler implements ICommandHandler<UpdateLegacyRunnerCommand> {
  constructor(
    private readonly writer: RunnerWriter,
    private readonly queries: RunnerQueries,
    private readonly templates: ProfileTemplateRepository,
    private readonly clock: Clock,
  ) {}

  async execute({ caller, runnerRef, input }: UpdateLegacyRunnerCommand): Promise<Record<string, unknown>> {
    const org = caller.organizationId;
    const row = await this.queries.rowOf(org, runnerRef);
    if (input.bodyRunnerId !== undefined && input.bodyRunnerId !== row.runner_id && input.bodyRunnerId !== row.uid) {
      throw legacyInvalid([{ field: 'runner.id', rule: 'immutable', description: `runner.id "${input.bodyRunnerId.slice(0, 100)}" does not match the runner in the path (${row.runner_id})` }]);
    }
    const allow = input.allowPrivilegedProfileAnnotations;
    const bindings = input.profileBindings;
    const effective = bindings ?? (row.profile_bindings as ProfileBinding[]);
    const verdicts: ProfileTemplateVerdict[] = [];
    const missing: FieldViolation[] = [];
    for (const [i, b] of effective.entries()) {
      const template = await this.templates.get(org, b.profileTemplateId);
      if (!template) {
        missing.push({ field: `profile_bindings[${i}].profile_template_id`, rule: 'existing_template', description: `profile_bindings[${i}]: template "${b.profileTemplateId.slice(0, 100)}" not found` });
        continue;
      }
      verdicts.push({ profileTemplateId: b.profileTemplateId, privilegedFields: privilegedTemplateFields(b.profileTemplateId, template) });
    }
    if (missing.length > 0 && bindings) throw legacyInvalid(missing);
    const now = this.clock.now();
    await this.writer.execute(
      row.uid,
      {
        type: 'UpdateLegacyProfileSettings',
        data: {
          runnerRef,
          ...(allow !== undefined ? { allowPrivilegedProfileAnnotations: allow } : {}),
          ...(bindings ? { profileBindings: bindings } : {}),
          templateVerdicts: verdicts,
          now,
        },
      },
      eventMetadata(org, caller.actor, now),
    );
    return this.queries.getLegacy(org, row.uid);
  }
}

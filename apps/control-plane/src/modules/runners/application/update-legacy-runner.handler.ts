import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { z } from 'zod';
import { PaddockError, ProfileBindingSchema, snakeToCamelDeep, type FieldViolation, type ProfileBinding } from '@paddock/contracts';
import { Clock } from '../../../infrastructure/tokens';
import type { ProfileTemplateVerdict } from '../domain/runner.commands';
import { ProfileTemplateRepository } from '../projections/profile-template.repository';
import { eventMetadata } from './event-metadata';
import { privilegedTemplateFields } from './policy-port';
import { UpdateLegacyRunnerCommand } from './runner.commands';
import { schemaRefusal } from './runner-input';
import { RunnerQueries } from './runner-queries';
import { RunnerWriter } from './runner-writer';

const LegacyBodySchema = z.object({
  runner: z
    .object({
      id: z.string().optional(),
      managedSpec: z.object({ allowPrivilegedProfileAnnotations: z.boolean().optional() }).passthrough().optional(),
      profileBindings: z.array(ProfileBindingSchema).optional(),
    })
    .passthrough()
    .optional(),
  updateMask: z.union([z.string(), z.object({ paths: z.array(z.string()) })]).optional(),
});

const LEGACY_PATHS = ['managed_spec.allow_privileged_profile_annotations', 'profile_bindings'] as const;
const snake = (p: string): string => p.split('.').map((s) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)).join('.');

function invalid(violations: FieldViolation[]): PaddockError {
  return new PaddockError('invalid_argument', violations[0]?.description ?? 'invalid request', { reason: 'PADDOCK_VALIDATION_FAILED', violations });
}

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

  async execute({ caller, runnerRef, body, updateMaskQuery }: UpdateLegacyRunnerCommand): Promise<Record<string, unknown>> {
    const parsed = LegacyBodySchema.safeParse(snakeToCamelDeep(body ?? {}));
    if (!parsed.success) {
      throw schemaRefusal('', parsed.error);
    }
    const mask = parsed.data.updateMask ?? updateMaskQuery;
    const rawPaths = (typeof mask === 'string' ? mask.split(',') : (mask?.paths ?? [])).map((p) => p.trim()).filter((p) => p !== '');
    if (rawPaths.length === 0) throw invalid([{ field: 'update_mask', rule: 'required', description: 'an explicit update mask is required' }]);
    const paths = rawPaths.map(snake);
    const unsupported = rawPaths.filter((_p, i) => !(LEGACY_PATHS as readonly string[]).includes(paths[i] ?? ''));
    if (unsupported.length > 0) {
      throw invalid(
        unsupported.map((p) => ({
          field: p,
          rule: 'v1beta2_path',
          description: `${p.slice(0, 200)} is not updatable on v1beta2; use PATCH /v1/sandbox/managedRunners/{id} (v1beta2 accepts ${LEGACY_PATHS.join(', ')})`,
        })),
      );
    }
    const runner = parsed.data.runner ?? {};
    const org = caller.organizationId;
    const row = await this.queries.rowOf(org, runnerRef);
    if (runner.id !== undefined && runner.id !== row.runner_id && runner.id !== row.uid) {
      throw invalid([{ field: 'runner.id', rule: 'immutable', description: `runner.id "${runner.id.slice(0, 100)}" does not match the runner in the path (${row.runner_id})` }]);
    }
    const allow = paths.includes('managed_spec.allow_privileged_profile_annotations')
      ? (runner.managedSpec?.allowPrivilegedProfileAnnotations ?? false)
      : undefined;
    const bindings: ProfileBinding[] | undefined = paths.includes('profile_bindings') ? (runner.profileBindings ?? []) : undefined;
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
    if (missing.length > 0 && bindings) throw invalid(missing);
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

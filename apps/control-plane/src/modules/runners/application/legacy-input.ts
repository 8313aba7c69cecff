import { z } from 'zod';
import {
  PaddockError,
  ProfileBindingSchema,
  ProfileTemplateInputSchema,
  snakeToCamelDeep,
  type FieldViolation,
  type ProfileBinding,
  type ProfileTemplateInput,
} from '@paddock/contracts';
import { schemaRefusal } from './runner-input';

/**
 * The legacy v1beta2 surface's request bodies, parsed into domain input before a command is sent.
 * Paddock serves there only the two settings that exist nowhere else (the privileged-profile flag
 * and profile bindings) and profile templates; everything else is managed on v1.
 */

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

export function legacyInvalid(violations: FieldViolation[]): PaddockError {
  return new PaddockError('invalid_argument', violations[0]?.description ?? 'invalid request', { reason: 'PADDOCK_VALIDATION_FAILED', violations });
}

/** A legacy PATCH: the settings its mask covers (absent = not covered), and the body's runner id. */
export interface LegacyUpdateInput {
  bodyRunnerId?: string;
  /** Covered by the mask: the new flag (false when the body leaves it out). */
  allowPrivilegedProfileAnnotations?: boolean;
  /** Covered by the mask: the new bindings (empty when the body leaves them out). */
  profileBindings?: ProfileBinding[];
}

/** `PATCH /v1beta2/sandbox/managed-runners/{id}`: the wrapped body `{runner, updateMask}` (or the mask as a query value). */
export function parseLegacyUpdate(body: unknown, updateMaskQuery: string | undefined): LegacyUpdateInput {
  const parsed = LegacyBodySchema.safeParse(snakeToCamelDeep(body ?? {}));
  if (!parsed.success) throw schemaRefusal('', parsed.error);
  const mask = parsed.data.updateMask ?? updateMaskQuery;
  const rawPaths = (typeof mask === 'string' ? mask.split(',') : (mask?.paths ?? [])).map((p) => p.trim()).filter((p) => p !== '');
  if (rawPaths.length === 0) throw legacyInvalid([{ field: 'update_mask', rule: 'required', description: 'an explicit update mask is required' }]);
  const paths = rawPaths.map(snake);
  const unsupported = rawPaths.filter((_p, i) => !(LEGACY_PATHS as readonly string[]).includes(paths[i] ?? ''));
  if (unsupported.length > 0) {
    throw legacyInvalid(
      unsupported.map((p) => ({
        field: p,
        rule: 'v1beta2_path',
        description: `${p.slice(0, 200)} is not updatable on v1beta2; use PATCH /v1/sandbox/managedRunners/{id} (v1beta2 accepts ${LEGACY_PATHS.join(', ')})`,
      })),
    );
  }
  const runner = parsed.data.runner ?? {};
  return {
    ...(runner.id !== undefined ? { bodyRunnerId: runner.id } : {}),
    ...(paths.includes('managed_spec.allow_privileged_profile_annotations')
      ? { allowPrivilegedProfileAnnotations: runner.managedSpec?.allowPrivilegedProfileAnnotations ?? false }
      : {}),
    ...(paths.includes('profile_bindings') ? { profileBindings: runner.profileBindings ?? [] } : {}),
  };
}

/** `POST /v1beta2/sandbox/profile-templates`: body `{ profileTemplate: {...} }` (or the template itself). */
export function parseProfileTemplate(body: unknown): ProfileTemplateInput {
  const camel = snakeToCamelDeep(body ?? {}) as Record<string, unknown>;
  const parsed = ProfileTemplateInputSchema.safeParse(camel.profileTemplate ?? camel);
  if (!parsed.success) throw schemaRefusal('profile_template', parsed.error);
  return parsed.data;
}

/**
 * The runners module's only doorway to `@paddock/policy`, so the rest of the module depends on
 * two small functions with stable shapes.
 */
import type { FieldViolation } from '@paddock/contracts';
import { checkProfileTemplate, validatePolicy } from '@paddock/policy';

export type RunnerPolicyVerdict = { ok: true; policy: Record<string, unknown> } | { ok: false; violations: FieldViolation[] };

/** Field paths are reported from the request's point of view: `policy.constraints...`. */
export function validateRunnerPolicy(doc: Record<string, unknown>): RunnerPolicyVerdict {
  const verdict = validatePolicy(doc);
  if (verdict.ok) return { ok: true, policy: verdict.policy };
  return {
    ok: false,
    violations: verdict.violations.map((v) => {
      const field = v.field === 'policy' || v.field.startsWith('policy.') ? v.field : `policy.${v.field}`;
      // The size cap keeps its documented message verbatim.
      const description = v.description === 'policy exceeds 256 KiB limit' ? v.description : `${field}: ${v.description}`;
      return { ...v, field, description };
    }),
  };
}

/** Privileged content of a legacy profile template (empty = none), via `checkProfileTemplate`. */
export function privilegedTemplateFields(templateId: string, template: unknown): string[] {
  const verdict = checkProfileTemplate(template, { bindingIndex: 0, templateId, allowPrivilegedProfileAnnotations: false });
  return verdict.ok ? [] : verdict.privilegedFields;
}

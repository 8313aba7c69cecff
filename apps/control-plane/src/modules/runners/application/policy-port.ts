/**
 * The runners module's only doorway to `@paddock/policy`, so the rest of the module depends on
 * two small functions with stable shapes.
 */
import type { FieldViolation, WarmPool } from '@paddock/contracts';
import { checkProfileTemplate, DEFAULT_POLICY, resolveSandboxSpec, validatePolicy } from '@paddock/policy';

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

/**
 * Every way the runner's policy (null = the platform default) would refuse a warm pool's template,
 * as the runner itself resolves it before starting anything: one violation per broken constraint,
 * its field the template's path in the request (`runner.spec.warm_pools[0].template.containers[0]...`).
 * The runner's capabilities are not known here, so what they alone refuse is left to the runner,
 * which reports it on the pool's status.
 */
export function warmPoolViolations(pools: readonly WarmPool[], policy: Record<string, unknown> | null): FieldViolation[] {
  const verdict = policy === null ? { ok: true as const, policy: DEFAULT_POLICY } : validatePolicy(policy);
  if (!verdict.ok) return [];
  return pools.flatMap((pool, i) => {
    const r = resolveSandboxSpec({ policy: verdict.policy, spec: pool.template });
    if (r.ok) return [];
    const prefix = `runner.spec.warm_pools[${i}].template`;
    return r.violations.map((v) => ({ ...v, field: `${prefix}.${v.field}`, description: `${prefix}.${v.field}: ${v.description}` }));
  });
}

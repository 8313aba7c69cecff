import type { FieldViolation } from '@paddock/contracts';
import { validatePolicy } from '@paddock/policy';
import { parsePolicyDocument } from '@paddock/policy/document';
import { stringify } from 'yaml';

export type PolicyFormat = 'yaml' | 'json';

/**
 * A policy document as the editor shows it. YAML and JSON are both read by the same hardened
 * parser the CLI and the control plane use.
 */
export function formatPolicy(policy: unknown, format: PolicyFormat): string {
  const value = policy ?? {};
  return format === 'json' ? `${JSON.stringify(value, null, 2)}\n` : stringify(value, { indent: 2 });
}

export type PolicyCheck = { ok: true; policy: Record<string, unknown> } | { ok: false; violations: FieldViolation[] };

/** Parses and validates the editor's text with `@paddock/policy`: the control plane's own rules, run here. */
export function checkPolicyText(text: string): PolicyCheck {
  const parsed = parsePolicyDocument(text);
  if (!parsed.ok) return { ok: false, violations: parsed.violations };
  const v = parsed.value;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    return { ok: false, violations: [{ field: 'document', rule: 'type', description: 'document: a policy is a mapping (an object), e.g. {} for the empty posture' }] };
  }
  const result = validatePolicy(v);
  return result.ok ? { ok: true, policy: v as Record<string, unknown> } : { ok: false, violations: result.violations };
}

import { PolicySchema } from '@paddock/contracts';
import { describe, expect, it } from 'vitest';
import type { Attributes } from '../../src/framework/schema';
import { POLICY_ATTRIBUTES } from '../../src/runner/schema';

/**
 * The provider's `policy` attribute must offer every field of the platform's policy document, so
 * a policy the API accepts can be written in Terraform: a field added to the contract without its
 * attribute fails here, naming its path (and so does an attribute the contract does not have).
 */
const camel = (name: string): string => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** What this test reads of a zod schema (the provider does not depend on zod itself). */
interface SchemaNode {
  def: { type: string; innerType?: SchemaNode; element?: SchemaNode; shape?: Record<string, SchemaNode> };
}

/** The fields of the object schema inside optional/nullable/array wrappers, if there is one. */
function fieldsOf(schema: SchemaNode): Record<string, SchemaNode> | undefined {
  const { def } = schema;
  if ((def.type === 'optional' || def.type === 'nullable') && def.innerType) return fieldsOf(def.innerType);
  if (def.type === 'array' && def.element) return fieldsOf(def.element);
  return def.type === 'object' ? def.shape : undefined;
}

function mismatches(attrs: Attributes, shape: Record<string, SchemaNode>, path: string): string[] {
  const out: string[] = [];
  const byKey = new Map(Object.entries(attrs).map(([name, a]) => [a.wire?.key ?? camel(name), a]));
  for (const key of Object.keys(shape)) if (!byKey.has(key)) out.push(`${path}${key}: in the contract, no attribute`);
  for (const [key, a] of byKey) {
    const field = shape[key];
    if (!field) {
      out.push(`${path}${key}: an attribute, not in the contract`);
      continue;
    }
    const inner = fieldsOf(field);
    // A JSON-string attribute (`jsonencode(...)`) carries a whole sub-document: nothing to walk.
    if (a.kind === 'nested' && !a.wire?.json && inner) out.push(...mismatches(a.attributes, inner, `${path}${key}.`));
  }
  return out;
}

describe('the policy attribute covers the policy contract', () => {
  it('has an attribute for every field of the policy document, at every level, and no other', () => {
    expect(mismatches(POLICY_ATTRIBUTES, fieldsOf(PolicySchema as unknown as SchemaNode) ?? {}, 'policy.')).toEqual([]);
  });
});

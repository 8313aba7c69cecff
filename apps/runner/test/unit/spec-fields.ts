import { SandboxSpecSchema } from '@paddock/contracts';
import type { z } from 'zod';

/**
 * Every field of the sandbox request, enumerated from the zod schema the planes parse with (never
 * from a hand-kept list), so a field added to the schema shows up here without anyone listing it.
 *
 * A path names a field the way a spec writes it, with `[]` for "each element": leaves
 * (`containers[].securityContext.runAsUser`, `network.dnsEgress`), and for every list of objects
 * the list itself (`containers[]`), which stands for "more than one element".
 */
export function specFieldPaths(): string[] {
  const out: string[] = [];
  walk(SandboxSpecSchema, '', out);
  return out.sort();
}

type Def = z.core.$ZodTypeDef & {
  innerType?: z.core.$ZodType;
  in?: z.core.$ZodType;
  element?: z.core.$ZodType;
  shape?: Record<string, z.core.$ZodType>;
};

/** The schema under wrappers that do not change which fields exist (optional, default, transforms). */
function unwrap(s: z.core.$ZodType): z.core.$ZodType {
  let cur = s;
  for (;;) {
    const def = cur._zod.def as Def;
    if ((def.type === 'optional' || def.type === 'default' || def.type === 'nullable' || def.type === 'readonly') && def.innerType) cur = def.innerType;
    else if (def.type === 'pipe' && def.in && (def.in._zod.def as Def).type !== 'transform') cur = def.in;
    else return cur;
  }
}

function walk(s: z.core.$ZodType, path: string, out: string[]): void {
  const t = unwrap(s);
  const def = t._zod.def as Def;
  if (def.type === 'object' && def.shape) {
    for (const [k, v] of Object.entries(def.shape)) walk(v, path ? `${path}.${k}` : k, out);
    return;
  }
  if (def.type === 'array' && def.element) {
    const el = unwrap(def.element);
    if ((el._zod.def as Def).type === 'object') {
      out.push(`${path}[]`);
      walk(el, `${path}[]`, out);
      return;
    }
  }
  // Scalars, enums, unions of scalars, lists of scalars and free-form maps are one field each.
  out.push(path);
}

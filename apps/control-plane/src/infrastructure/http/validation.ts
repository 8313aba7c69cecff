import { PaddockError, type FieldViolation } from '@paddock/contracts';
import type { z } from 'zod';

/**
 * Parses a request part with a zod schema; on failure throws `invalid_argument` naming every
 * field and the rule it broke (`root` prefixes the field paths, e.g. `token.name`).
 */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown, root = ''): z.infer<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const violations: FieldViolation[] = r.error.issues.map((i) => {
    const path = [root, ...i.path.map(String)].filter(Boolean).join('.');
    return { field: path || '(body)', rule: i.code, description: i.message };
  });
  const first = violations[0];
  const message = first ? `${first.field}: ${first.description}` : 'request is invalid';
  throw new PaddockError('invalid_argument', message, { reason: 'PADDOCK_VALIDATION_FAILED', violations });
}

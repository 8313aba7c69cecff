import { parseOrRefuse } from '@paddock/kit';
import type { z } from 'zod';

/**
 * Parses a request part with a zod schema; on failure throws `invalid_argument` naming every
 * field and the rule it broke (`root` prefixes the field paths, e.g. `token.name`).
 */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown, root = ''): z.infer<S> {
  return parseOrRefuse(schema, value, { prefix: root, reason: 'PADDOCK_VALIDATION_FAILED' });
}

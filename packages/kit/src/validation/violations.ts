import { PaddockError, type ErrorReason, type FieldViolation } from '@paddock/contracts';
import type { z } from 'zod';

/** How a surface spells field paths: its request's root name, and snake_case keys for the snake_case APIs. */
export interface FieldPathStyle {
  /** Prepended to every path (`runner`, `spec`). */
  prefix?: string;
  /** Keys in snake_case, as the control plane's runner API spells them. */
  snakeCase?: boolean;
}

const snake = (s: string): string => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * The one path style of every field violation: keys joined by dots, array indices in brackets
 * (`spec.containers[0].image`), as the policy engine names fields too.
 */
export function fieldPath(path: readonly PropertyKey[], style: FieldPathStyle = {}): string {
  let out = style.prefix ?? '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += `${out ? '.' : ''}${style.snakeCase ? snake(String(seg)) : String(seg)}`;
  }
  return out;
}

/**
 * Every issue of a failed parse as a field violation; an unknown key is refused by its own name
 * (one violation per key), never as its parent object.
 */
export function zodViolations(error: z.ZodError, style: FieldPathStyle = {}): FieldViolation[] {
  const out: FieldViolation[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ field: fieldPath([...issue.path, key], style), rule: 'known_field', description: 'not a known field' });
      continue;
    }
    out.push({ field: fieldPath(issue.path, style) || '(body)', rule: issue.code, description: issue.message });
  }
  return out;
}

/** `invalid_argument` whose message names every violated field and what is wrong with it. */
export function validationError(violations: FieldViolation[], reason: ErrorReason): PaddockError {
  const message = violations.length ? violations.map((v) => `${v.field}: ${v.description}`).join('; ') : 'the request is invalid';
  return new PaddockError('invalid_argument', message, { reason, violations });
}

/** Parses `value` with `schema`, or throws {@link validationError} naming every violation. */
export function parseOrRefuse<S extends z.ZodType>(schema: S, value: unknown, opts: FieldPathStyle & { reason: ErrorReason }): z.infer<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  throw validationError(zodViolations(r.error, opts), opts.reason);
}

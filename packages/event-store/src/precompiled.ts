import { createQueryId, type Compilable, type CompiledQuery } from 'kysely';

/** Where each compiled parameter comes from: the call's argument at that index, or a constant. */
type Slot = { arg: number } | { constant: unknown };

/**
 * Stand-in arguments. Mixed case and outer spaces, so the usual normalisations (`toLowerCase`,
 * `toUpperCase`, `trim`) change them and are caught as derived values.
 */
const sentinel = (set: 'a' | 'b', i: number): string => ` \u0000Pdk-Precompiled-${set}-${i} `;

function sameConstant(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * A query of fixed shape, built and compiled by kysely ONCE; each call only binds new values.
 *
 * kysely rebuilds and recompiles a query's operation tree on every execution. For a single-row
 * read that is pure repeated work: it was about a tenth of a runner GET's CPU. `build` is called
 * twice at construction with two different sets of stand-in arguments; each compiled parameter
 * must be either one argument passed through untouched (the same index in both compilations) or
 * the same constant in both. Anything else means the builder derived a value from an argument
 * (`ref.toLowerCase()`), which rebinding could not reproduce, or branched on one (the SQL texts
 * differ): both are refused here, at construction, instead of binding wrong values later. Derive
 * such values before the call and pass them as arguments; give each shape its own precompiled
 * query. A builder must not branch on its arguments at all: a branch that both stand-ins happen
 * to take alike (`UUID.test(ref)`) cannot be detected, so choose the shape outside the builder.
 *
 * The result runs on any executor of the same database (`db.executeQuery(q(...))`, or a
 * transaction's), so one precompiled query serves both plain reads and reads inside a writer's
 * transaction.
 */
export function precompile<A extends string[], R>(build: (...args: A) => Compilable<R>, arity: A['length']): (...args: A) => CompiledQuery<R> {
  const compileWith = (set: 'a' | 'b'): CompiledQuery<R> => build(...(Array.from({ length: arity }, (_, i) => sentinel(set, i)) as A)).compile();
  const a = compileWith('a');
  const b = compileWith('b');
  if (a.sql !== b.sql) throw new Error(`precompile: the query's text depends on its arguments; build one precompiled query per shape:\n${a.sql}\n${b.sql}`);
  const argOf = new Map(Array.from({ length: arity }, (_, i) => [sentinel('a', i), i] as const));
  const slots: Slot[] = a.parameters.map((pa, j) => {
    const pb = b.parameters[j];
    const i = typeof pa === 'string' ? argOf.get(pa) : undefined;
    if (i !== undefined) {
      if (pb !== sentinel('b', i)) throw new Error(`precompile: parameter $${j + 1} is argument ${i} in one compilation and not the other`);
      return { arg: i };
    }
    if (!sameConstant(pa, pb)) throw new Error(`precompile: parameter $${j + 1} is derived from an argument; pass the derived value as an argument instead`);
    return { constant: pa };
  });
  for (let i = 0; i < arity; i++) {
    if (!slots.some((s) => 'arg' in s && s.arg === i)) throw new Error(`precompile: argument ${i} never reaches the query untouched`);
  }
  return (...args: A): CompiledQuery<R> => ({
    query: a.query,
    queryId: createQueryId(),
    sql: a.sql,
    parameters: slots.map((s) => ('arg' in s ? args[s.arg] : s.constant)),
  });
}

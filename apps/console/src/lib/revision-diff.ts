import type { RunnerFieldChange, RunnerRevision } from '@paddock/contracts';

/**
 * What changed between two revisions of a runner: every field some revision in (from, to]
 * changed, with its value at `from` (the first change's `before`) and at `to` (the last change's
 * `after`). A field changed and changed back is left out. `from` may be greater than `to`: the
 * diff then reads backwards.
 */
export function diffRevisions(revisions: readonly RunnerRevision[], from: number, to: number): RunnerFieldChange[] {
  const [lo, hi] = from <= to ? [from, to] : [to, from];
  const fields = new Map<string, { before: unknown; after: unknown }>();
  for (const r of [...revisions].sort((a, b) => a.revision - b.revision)) {
    if (r.revision <= lo || r.revision > hi) continue;
    for (const c of r.changes) {
      const seen = fields.get(c.field);
      if (seen) seen.after = c.after;
      else fields.set(c.field, { before: c.before, after: c.after });
    }
  }
  const out: RunnerFieldChange[] = [];
  for (const [field, v] of fields) {
    if (JSON.stringify(v.before) === JSON.stringify(v.after)) continue;
    out.push(from <= to ? { field, before: v.before, after: v.after } : { field, before: v.after, after: v.before });
  }
  return out.sort((a, b) => a.field.localeCompare(b.field));
}

// Benchmarks as data. Each suite writes `bench-results/<suite>.json` (`report` in
// @paddock/testing); this turns them into one `bench-results.json` at the repository root,
// `[{ id, suite, name, unit, median, spread, floor, ratio, target, met }]`, with ids stable across
// runs (suite + the row's name) so that runs can be compared, and renders the README table.
//
// `met` is computed from the row's target when it reads as a bound: "≤ 3× floor" / ">= 0.40x"
// compare the ratio, "< 60 ms" / ">= 200000 ops/s" compare the median; anything else is null.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const slug = (s) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

const OPS = { '≤': (a, b) => a <= b, '<=': (a, b) => a <= b, '<': (a, b) => a < b, '≥': (a, b) => a >= b, '>=': (a, b) => a >= b, '>': (a, b) => a > b };

/** Whether a row meets its target, when the target is a bound this can read; null otherwise. */
export function targetMet(row) {
  const m = /^\s*(≤|<=|<|≥|>=|>)\s*([\d,]*\.?\d+)\s*(×|x)?/.exec(row.target ?? '');
  if (!m) return null;
  const bound = Number(m[2].replace(/,/g, ''));
  const value = m[3] ? row.ratio : row.median;
  if (value === undefined || Number.isNaN(value)) return null;
  return OPS[m[1]](value, bound);
}

export function collect(resultsDir) {
  if (!existsSync(resultsDir)) return [];
  const rows = [];
  for (const f of readdirSync(resultsDir).filter((x) => x.endsWith('.json')).sort()) {
    const s = JSON.parse(readFileSync(join(resultsDir, f), 'utf8'));
    for (const r of s.rows) {
      rows.push({
        id: `${slug(s.suite)}.${slug(r.id ?? r.name)}`,
        suite: s.suite,
        at: s.at,
        name: r.name,
        unit: r.unit,
        median: r.median,
        spread: r.spread,
        floor: r.floor ?? null,
        ratio: r.ratio ?? null,
        target: r.target ?? null,
        met: targetMet(r),
        ...(r.note ? { note: r.note } : {}),
      });
    }
  }
  return rows;
}

const fmt = (v) => (v === undefined || v === null || Number.isNaN(v) ? '-' : Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : Math.abs(v) >= 1 ? v.toFixed(2) : v.toFixed(3));

/** The README's performance table, from `bench-results.json` rows. */
export function markdownTable(rows) {
  const lines = ['| Figure | Median | Same-run floor | Ratio | Target | Met |', '| --- | --- | --- | --- | --- | --- |'];
  for (const r of rows) {
    const floor = r.floor ? `${r.floor.name}, ${fmt(r.floor.median)} ${r.unit}` : '—';
    const met = r.met === null ? '—' : r.met ? 'yes' : '**no**';
    lines.push(`| ${r.suite}: ${r.name} | ${fmt(r.median)} ${r.unit} | ${floor} | ${r.ratio === null ? '—' : `${fmt(r.ratio)}×`} | ${r.target ?? '—'} | ${met} |`);
  }
  return lines.join('\n');
}

// `node scripts/bench-results.mjs [--table]`: (re)writes bench-results.json from bench-results/,
// and with --table prints the README table.
if (import.meta.url === `file://${process.argv[1]}`) {
  const root = new URL('..', import.meta.url).pathname;
  const rows = collect(join(root, 'bench-results'));
  writeFileSync(join(root, 'bench-results.json'), `${JSON.stringify(rows, null, 2)}\n`);
  if (process.argv.includes('--table')) console.log(markdownTable(rows));
  else console.log(`bench-results.json: ${rows.length} figures`);
}

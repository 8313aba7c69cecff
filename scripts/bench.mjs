// `pnpm bench`: runs every package's benchmark one at a time (2 cores: concurrent benchmarks
// would measure each other), then prints one report from bench-results/*.json and writes every
// figure to bench-results.json (see scripts/bench-results.mjs; the README table is made from it).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { collect } from './bench-results.mjs';

const root = new URL('..', import.meta.url).pathname;
const results = join(root, 'bench-results');
rmSync(results, { recursive: true, force: true });
const r = spawnSync('pnpm', ['exec', 'turbo', 'run', 'bench', '--concurrency=1', '--continue', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' },
});
const fmt = (v) => (v === undefined || Number.isNaN(v) ? '-' : Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toFixed(3));
console.log('\n================ Paddock benchmark report ================');
if (existsSync(results)) {
  for (const f of readdirSync(results).filter((x) => x.endsWith('.json')).sort()) {
    const s = JSON.parse(readFileSync(join(results, f), 'utf8'));
    console.log(`\n[${s.suite}] ${s.at}`);
    for (const row of s.rows) {
      const floor = row.floor ? ` | floor ${row.floor.name}: ${fmt(row.floor.median)} | ratio ${fmt(row.ratio)}x` : '';
      console.log(`  ${row.name}: ${fmt(row.median)} ${row.unit} (spread ${fmt(row.spread[0])}..${fmt(row.spread[1])})${floor}${row.target ? ` | target ${row.target}` : ''}${row.note ? ` | ${row.note}` : ''}`);
    }
  }
}
const rows = collect(results);
writeFileSync(join(root, 'bench-results.json'), `${JSON.stringify(rows, null, 2)}\n`);
const missed = rows.filter((x) => x.met === false);
console.log(`\nbench-results.json: ${rows.length} figures, ${rows.filter((x) => x.met === true).length} targets met, ${missed.length} missed${missed.length ? ` (${missed.map((x) => x.id).join(', ')})` : ''}`);
console.log('README table: node scripts/bench-results.mjs --readme (or --table to print it)');
process.exit(r.status ?? 1);

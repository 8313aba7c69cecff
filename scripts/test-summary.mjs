// Sums every package's vitest JSON report and prints the closing line CI reads:
// "N passed, N failed[, N skipped]". Exits non-zero when anything failed or nothing ran.
import { readFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const dirs = [];
for (const group of ['apps', 'packages', 'clients']) {
  const base = join(root, group);
  if (!existsSync(base)) continue;
  for (const d of readdirSync(base)) dirs.push(join(base, d));
}
dirs.push(join(root, 'e2e'));
let passed = 0, failed = 0, skipped = 0, reports = 0;
const failures = [];
for (const d of dirs) {
  const f = join(d, '.vitest/results.json');
  if (!existsSync(f)) continue;
  const r = JSON.parse(readFileSync(f, 'utf8'));
  reports++;
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  skipped += r.numPendingTests + (r.numTodoTests ?? 0);
  // A suite that failed with none of its tests failing (it did not load, or a beforeAll/afterAll
  // hook threw) counts as one failure: otherwise the closing line would say "0 failed" for a red run.
  for (const s of r.testResults ?? []) {
    if (s.status === 'failed' && (s.assertionResults ?? []).every((a) => a.status !== 'failed')) {
      failed++;
      failures.push(`${s.name}${s.message ? `: ${String(s.message).split('\n')[0]}` : ''}`);
    }
  }
}
// The test runner passes how many processes outlived the tests: each is a failure of the run.
const leakArg = process.argv.indexOf('--process-leaks');
if (leakArg > 0) {
  const leaks = Number(process.argv[leakArg + 1] ?? 0);
  failed += leaks;
  failures.push(`${leaks} process(es) outlived the tests (listed above)`);
}
if (failures.length) console.error(`failures outside the tests (a suite that did not load, a hook that threw, processes left behind):\n  ${failures.join('\n  ')}`);
if (reports === 0 || passed + failed === 0) {
  console.error('no test results found');
  console.log('0 passed, 1 failed');
  process.exit(1);
}
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed ? 1 : 0);

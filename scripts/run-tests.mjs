// The README's test command. Typechecks, lints and tests every package through turbo, then
// prints the "N passed, N failed" closing line from the vitest reports, even when turbo failed.
import { spawnSync } from 'node:child_process';
import { rmSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { startTracking } from './process-tracking.mjs';

const root = new URL('..', import.meta.url).pathname;
// Stale reports from an earlier run must never be counted.
for (const group of ['apps', 'packages', 'clients']) {
  const base = join(root, group);
  if (!existsSync(base)) continue;
  for (const d of readdirSync(base)) rmSync(join(base, d, '.vitest'), { recursive: true, force: true });
}
rmSync(join(root, 'e2e', '.vitest'), { recursive: true, force: true });

const extra = process.argv.slice(2);
// Every process the run starts is tracked, so that one outliving the tests fails the run by name.
const tracking = startTracking('pnpm-test');
if (tracking.off) console.error(tracking.off);
// --continue: every package's tests run even when one fails, so the closing line counts them all.
// A bounded concurrency: suites start real Postgres, NATS, sandboxes and app processes, and on a
// 2-core machine running many at once turns timeouts into noise.
const concurrency = process.env.PADDOCK_TEST_CONCURRENCY ?? '2';
const turbo = spawnSync(
  'pnpm',
  // knip: unused files and dependencies across the workspace (a root task, once per run).
  ['exec', 'turbo', 'run', 'typecheck', 'lint', 'knip', 'test', '--continue', `--concurrency=${concurrency}`, '--output-logs=errors-only', ...extra],
  { cwd: root, stdio: 'inherit', env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' } },
);
const leaked = tracking.off ? [] : tracking.leftovers();
if (leaked.length) {
  console.error(`processes started by the tests outlived them (stopped now):\n  ${leaked.join('\n  ')}`);
  await tracking.killLeftovers();
}
tracking.close?.();
const summary = spawnSync('node', [join(root, 'scripts/test-summary.mjs'), ...(leaked.length ? ['--process-leaks', String(leaked.length)] : [])], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(turbo.status !== 0 ? 1 : (summary.status ?? 1));

/**
 * CLI startup cost: `cwic --help` and `cwic sandbox runner get` (against a server that answers
 * 404-free empty lists is not needed: an unreachable URL measures startup + one failed connect),
 * beside a bare `node -e 0` measured in the same run. Target: --help within 50 ms of bare node.
 * Needs `pnpm --filter @paddock/cli build` first (runs the compiled CLI, as users do).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { latencyStats, medianOf, report, row } from '@paddock/testing';

const cli = join(__dirname, '..', 'dist', 'cli.js');
if (!existsSync(cli)) {
  console.error(`build the CLI first: ${cli} is missing (pnpm --filter @paddock/cli build)`);
  process.exit(1);
}

function timeCommand(args: string[], n: number, env: NodeJS.ProcessEnv = process.env): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    spawnSync(process.execPath, args, { stdio: 'ignore', env });
    out.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return out;
}

const RUNS = 5;
const N = Number(process.env.PADDOCK_BENCH_N ?? 20);
const bare: number[] = [];
const help: number[] = [];
const get: number[] = [];
const env = { ...process.env, PADDOCK_API_KEY: 'bench', PADDOCK_CONTROL_PLANE_URL: 'http://127.0.0.1:9' };
for (let r = 0; r < RUNS; r++) {
  timeCommand(['-e', '0'], 3);
  bare.push(latencyStats(timeCommand(['-e', '0'], N)).p50);
  help.push(latencyStats(timeCommand([cli, '--help'], N)).p50);
  get.push(latencyStats(timeCommand([cli, 'sandbox', 'runner', 'get'], N, env)).p50);
}
const floor = { name: 'node -e 0', median: medianOf(bare) };
report('cli-startup', [
  row('bare node -e 0 (p50 per run)', 'ms', bare),
  row('cwic --help (p50 per run)', 'ms', help, { floor, target: '<= floor + 50 ms', note: `overhead ${(medianOf(help) - floor.median).toFixed(1)} ms` }),
  row('cwic sandbox runner get, unreachable server (p50 per run)', 'ms', get, { floor, note: `overhead ${(medianOf(get) - floor.median).toFixed(1)} ms` }),
]);

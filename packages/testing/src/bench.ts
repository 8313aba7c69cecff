import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Nearest-rank percentile of a sorted sample. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export interface LatencyStats {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  min: number;
  max: number;
  mean: number;
}

export function latencyStats(samplesMs: readonly number[]): LatencyStats {
  const s = [...samplesMs].sort((a, b) => a - b);
  const sum = s.reduce((a, b) => a + b, 0);
  return {
    n: s.length,
    p50: percentile(s, 50),
    p90: percentile(s, 90),
    p99: percentile(s, 99),
    min: s[0] ?? Number.NaN,
    max: s[s.length - 1] ?? Number.NaN,
    mean: s.length ? sum / s.length : Number.NaN,
  };
}

/** Times `fn` `n` times sequentially (after `warmup` untimed calls); returns per-call ms. */
export async function timeSequential(fn: () => unknown, n: number, warmup = Math.min(20, n)): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    out.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return out;
}

/**
 * One row of a benchmark report: a figure beside the floor measured on the same machine in
 * the same run, and their ratio. `median` is the median over `runs` repetitions of the figure;
 * `spread` is [min, max] over those runs.
 */
export interface BenchRow {
  /** Stable id inside its suite for `bench-results.json` (default: made from `name`); set it when a name changes. */
  id?: string;
  name: string;
  unit: string;
  median: number;
  spread: [number, number];
  floor?: { name: string; median: number };
  /** figure / floor (for latencies) or floor / figure is not used: always figure divided by floor. */
  ratio?: number;
  target?: string;
  note?: string;
}

export function medianOf(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** Builds a row from repeated runs of one figure. */
export function row(name: string, unit: string, runs: readonly number[], extra: Partial<BenchRow> = {}): BenchRow {
  const median = medianOf(runs);
  const r: BenchRow = { name, unit, median, spread: [Math.min(...runs), Math.max(...runs)], ...extra };
  if (r.floor && r.ratio === undefined) r.ratio = median / r.floor.median;
  return r;
}

const fmt = (v: number): string => (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toFixed(3));

/** Prints the rows as a table and writes them to `bench-results/<suite>.json` at the repo root. */
export function report(suite: string, rows: BenchRow[], repoRoot = join(__dirname, '..', '..', '..')): void {
  const lines = [`\n== ${suite} (${new Date().toISOString()}) ==`];
  for (const r of rows) {
    const floor = r.floor ? `  floor ${r.floor.name} ${fmt(r.floor.median)} ${r.unit}  ratio ${fmt(r.ratio ?? Number.NaN)}x` : '';
    const target = r.target ? `  target ${r.target}` : '';
    lines.push(`${r.name}: median ${fmt(r.median)} ${r.unit} [${fmt(r.spread[0])}..${fmt(r.spread[1])}]${floor}${target}${r.note ? `  (${r.note})` : ''}`);
  }
  console.log(lines.join('\n'));
  const dir = join(repoRoot, 'bench-results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${suite}.json`), JSON.stringify({ suite, at: new Date().toISOString(), rows }, null, 2));
}

/**
 * The root of the benches' bare bwrap floors: /usr read-only with the usr-merged links beside it.
 * Not a recursive bind of `/`: that copies every mount of the host, and one that comes or goes
 * meanwhile (another sandbox's network namespace under /run/netns) makes bwrap exit 1 and the
 * whole bench with it; a sandbox's own root binds only its image in any case.
 */
export const BARE_BWRAP_ROOT: readonly string[] = ['--ro-bind', '/usr', '/usr', '--symlink', 'usr/bin', '/bin', '--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64', '--symlink', 'usr/sbin', '/sbin'];

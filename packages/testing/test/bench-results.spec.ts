import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../src';

interface Figure {
  id: string;
  median: number;
  ratio: number | null;
  target: string | null;
  met: boolean | null;
}
interface BenchResults {
  collect(dir: string): Figure[];
  targetMet(row: { target?: string; ratio?: number; median?: number }): boolean | null;
  markdownTable(rows: Figure[]): string;
}

/** `pnpm bench`'s data file: one figure per row, stable ids, and whether each target is met. */
describe('bench-results.json', () => {
  let m: BenchResults;
  beforeAll(async () => {
    m = (await import(join(REPO_ROOT, 'scripts', 'bench-results.mjs'))) as BenchResults;
  });

  it('reads bounds on the ratio (×, x) or on the median; anything else is not judged', () => {
    expect(m.targetMet({ target: '≤ 3× floor', ratio: 2.4 })).toBe(true);
    expect(m.targetMet({ target: '<= 3x floor', ratio: 3.2 })).toBe(false);
    expect(m.targetMet({ target: '>= 0.40x floor', ratio: 0.107 })).toBe(false);
    expect(m.targetMet({ target: '< 60 ms', median: 21.7 })).toBe(true);
    expect(m.targetMet({ target: '≥ 200,000/s', median: 260_376 })).toBe(true);
    expect(m.targetMet({ target: '< 100 ms', median: 981 })).toBe(false);
    expect(m.targetMet({ target: 'within 50 ms of the floor', median: 1 })).toBeNull();
    expect(m.targetMet({ median: 1 })).toBeNull();
  });

  it('turns every suite file into rows with ids made of the suite and the figure name', () => {
    const dir = mkdtempSync(join(tmpdir(), 'paddock-bench-'));
    try {
      mkdirSync(dir, { recursive: true });
      const rows = [
        { name: 'create → RUNNING, p50', unit: 'ms', median: 16.3, spread: [15, 18], floor: { name: 'bare bwrap', median: 6.9 }, ratio: 2.36, target: '≤ 3× floor' },
        { id: 'exec-p50', name: 'exec `true`, p50 (renamed)', unit: 'ms', median: 2.2, spread: [2, 2.5] },
      ];
      writeFileSync(join(dir, 'runner.json'), JSON.stringify({ suite: 'Runner (NATS)', at: '2026-12-01T00:00:00Z', rows }));
      const got = m.collect(dir);
      expect(got.map((r) => [r.id, r.met])).toEqual([
        ['runner-nats.create-running-p50', true],
        ['runner-nats.exec-p50', null],
      ]);
      expect(m.markdownTable(got).split('\n')).toHaveLength(4);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

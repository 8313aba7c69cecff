import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTies, WarmTieJournal, type WarmTie } from '../../src/service/warm-ties';

const tie = (n: number): WarmTie => ({
  v: 1,
  warmId: `warm-p-${n}`,
  warmDeadline: new Date(2_000_000).toISOString(),
  sandboxId: `sb-${n}`,
  env: { HOSTNAME: `sb-${n}`, SECRET: 'value' },
  labels: { 'paddock.dev/runner-id': 'r1' },
  takenAt: new Date(1_000).toISOString(),
  deadline: new Date(1_000_000).toISOString(),
});

describe('warm take journal', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'paddock-ties-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('replays takes and ends, skips a torn last line, and is rewritten to the live ties at load (owner-only)', () => {
    const path = join(dir, 'warm-taken.jsonl');
    const store = new WarmTieJournal(path);
    for (const n of [1, 2, 3]) store.put(tie(n));
    store.remove('warm-p-2');
    store.close();
    // A runner killed in the middle of a write.
    appendFileSync(path, '{"op":"take","v":1,"warmId":"warm-p-4","sandb');
    expect([...readTies(path).keys()]).toEqual(['warm-p-1', 'warm-p-3']);

    const restarted = new WarmTieJournal(path);
    expect(restarted.loadAll()).toEqual([tie(1), tie(3)]);
    expect(readFileSync(path, 'utf8').trim().split('\n')).toHaveLength(2);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    restarted.remove('warm-p-1');
    restarted.close();
    expect([...readTies(path).values()]).toEqual([tie(3)]);
  });

  it('stays near the size of its live ties however many takes come and go', () => {
    const path = join(dir, 'warm-taken.jsonl');
    const store = new WarmTieJournal(path);
    store.put(tie(0));
    for (let n = 1; n <= 5_000; n++) {
      store.put(tie(n));
      store.remove(`warm-p-${n}`);
    }
    store.close();
    expect([...readTies(path).keys()]).toEqual(['warm-p-0']);
    expect(readFileSync(path, 'utf8').trim().split('\n').length).toBeLessThanOrEqual(1 + 1_025);
  });
});

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { TickBatchedDestination } from '../src/log/tick-batched-destination';

const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('tick-batched log destination', () => {
  it('writes the lines of one event-loop turn in one write, in order, and the next turn in another', async () => {
    const writes: string[] = [];
    const d = new TickBatchedDestination((t) => writes.push(t));
    d.write('a\n');
    d.write('b\n');
    d.write('c\n');
    expect(writes).toEqual([]);
    await nextTurn();
    expect(writes).toEqual(['a\nb\nc\n']);
    d.write('d\n');
    await nextTurn();
    expect(writes).toEqual(['a\nb\nc\n', 'd\n']);
  });

  it('writes what it holds when flushed (as the process exits), and nothing twice', async () => {
    const writes: string[] = [];
    const d = new TickBatchedDestination((t) => writes.push(t));
    d.write('held\n');
    d.flush();
    expect(writes).toEqual(['held\n']);
    await nextTurn();
    d.flush();
    expect(writes).toEqual(['held\n']);
  });

  // A real process: the lines of every logger on stdout, in the order written, whether it ends by
  // process.exit, an uncaught exception or running out of work, in the turn that logged them.
  it.each([
    ['exit', 3],
    ['throw', 1],
    ['end', 0],
  ])('loses no line when the process leaves by %s', (how, code) => {
    const r = spawnSync(
      process.execPath,
      ['--conditions=@paddock/source', '--import', 'tsx', join(__dirname, 'fixtures', 'log-then-leave.ts'), how],
      { cwd: join(__dirname, '..'), encoding: 'utf8', timeout: 30_000 },
    );
    expect(r.status).toBe(code);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { msg: string; service: string });
    expect(lines.map((l) => [l.service, l.msg])).toEqual([
      ['fixture', 'first'],
      ['fixture-other', 'second'],
      ['fixture', 'third'],
    ]);
  });
});

import { mkdtempSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogChunk } from '../../src/backend/sandbox-backend';
import { fromOffset, HEADER_BYTES, LogCursor, tailLines } from '../../src/backend/local/log-file';

function record(stream: 0 | 1, time: number, data: string): Buffer {
  const h = Buffer.alloc(HEADER_BYTES);
  h.writeUInt32LE(Buffer.byteLength(data), 0);
  h.writeUInt8(stream, 4);
  h.writeDoubleLE(time, 8);
  return Buffer.concat([h, Buffer.from(data)]);
}

const chunk = (offset: number, data: string): LogChunk => ({ offset, stream: 'stdout', data: Buffer.from(data), time: new Date(0) });

describe('framed log reader', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'paddock-log-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads complete records only, and resumes where it stopped', () => {
    const path = join(dir, 'log');
    const first = record(0, 1.5, 'hello\n');
    const second = record(1, 2.5, 'oops\n');
    writeFileSync(path, Buffer.concat([first, second.subarray(0, 10)]));
    const cursor = new LogCursor(path);
    expect(cursor.readNew().map((c) => [c.offset, c.stream, c.data.toString(), c.time.getTime()])).toEqual([[0, 'stdout', 'hello\n', 1500]]);
    appendFileSync(path, second.subarray(10));
    expect(cursor.readNew().map((c) => [c.offset, c.stream, c.data.toString()])).toEqual([[6, 'stderr', 'oops\n']]);
    expect(cursor.readNew()).toEqual([]);
  });

  it('slices the record an offset falls into', () => {
    const got = fromOffset([chunk(0, 'abc'), chunk(3, 'def')], 4);
    expect(got.map((c) => [c.offset, c.data.toString()])).toEqual([[4, 'ef']]);
  });

  it('keeps the last n lines across records, counting an unterminated last line', () => {
    const chunks = [chunk(0, 'a\nb\n'), chunk(4, 'c\nd')];
    expect(tailLines(chunks, 2).map((c) => c.data.toString()).join('')).toBe('c\nd');
    expect(tailLines(chunks, 3).map((c) => c.data.toString()).join('')).toBe('b\nc\nd');
    expect(tailLines([chunk(0, 'x\ny\n')], 1).map((c) => [c.offset, c.data.toString()])).toEqual([[2, 'y\n']]);
    expect(tailLines(chunks, 10)).toEqual(chunks);
    expect(tailLines(chunks, 0)).toEqual([]);
  });
});

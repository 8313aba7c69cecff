import { createHash, randomBytes } from 'node:crypto';
import type { StreamFrame } from '@paddock/contracts';
import { waitFor } from '@paddock/testing';
import { ORG, smallSpec, startHarness, BASE_IMAGE, type Harness } from '../support/harness';
import type { ClientStream } from '../support/runner-client';

const MiB = 1024 * 1024;
/** The acceptance figures (100 MiB exec round trip, 50 MiB file); PADDOCK_SOAK=1 multiplies them. */
const SCALE = process.env.PADDOCK_SOAK === '1' ? 4 : 1;

/** Deterministic-length random data, produced chunk by chunk so the test itself stays small. */
function* chunks(totalBytes: number, chunkBytes = 256 * 1024): Generator<Buffer> {
  for (let left = totalBytes; left > 0; left -= chunkBytes) yield randomBytes(Math.min(chunkBytes, left));
}

async function readUntil(stream: ClientStream, stop: (f: StreamFrame) => boolean, onFrame: (f: StreamFrame) => void): Promise<StreamFrame> {
  for (;;) {
    const f = await stream.next();
    if (f.header.kind === 'error') throw new Error(`stream error: ${JSON.stringify(f.header.error)}`);
    onFrame(f);
    if (stop(f)) return f;
  }
}

describe('runner service: streams over NATS', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    // Room for the sandbox's own stdio relays and page cache while 100 MiB flow through it.
    await h.createRunning(
      'st-1',
      smallSpec({ containers: [{ name: 'main', image: BASE_IMAGE, resources: { cpu: '500m', memory: '512Mi' } }] }),
    );
  });
  afterAll(async () => h?.stop());

  /** A streamed exec in the suite's sandbox, stdin credit granted. */
  async function openExec(argv: string[]): Promise<ClientStream> {
    const stream = h.client.openStream(16);
    const opened = await h.client.call('execStream', { sandboxId: 'st-1', organizationId: ORG, streamId: stream.streamId, initialCredit: stream.window, argv });
    stream.grantSend(opened.stdinCredit);
    return stream;
  }

  it(`round-trips ${100 * SCALE} MiB of binary stdin through cat byte-exact, with memory bounded by the credit window`, async () => {
    const total = 100 * MiB * SCALE;
    const stream = await openExec(['cat']);
    const sentHash = createHash('sha256');
    const recvHash = createHash('sha256');
    let received = 0;
    const rss0 = process.memoryUsage.rss();
    let rssPeak = rss0;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage.rss())), 20);
    const sending = (async () => {
      for (const c of chunks(total)) {
        sentHash.update(c);
        await stream.sendBytes('stdin', c);
      }
      stream.send({ kind: 'stdinEof' });
    })();
    const exit = await readUntil(
      stream,
      (f) => f.header.kind === 'exit',
      (f) => {
        if (f.header.kind === 'stdout') {
          recvHash.update(f.payload);
          received += f.payload.length;
        }
      },
    );
    await sending;
    clearInterval(sampler);
    stream.close();
    expect(exit.header.exitCode, JSON.stringify(h.events.filter((e) => e.sandboxId === 'st-1'))).toBe(0);
    expect(received).toBe(total);
    expect(recvHash.digest('hex')).toBe(sentHash.digest('hex'));
    // Runner and caller share this process: 100 MiB went through it twice, yet it never held
    // more than a few windows of it.
    expect(stream.maxQueued).toBeLessThanOrEqual(16);
    expect(rssPeak - rss0).toBeLessThan(96 * MiB);
  }, 240_000);

  it('holds output back while the caller grants no credit (a slow reader slows the command, nothing piles up)', async () => {
    const stream = h.client.openStream(4);
    await h.client.call('execStream', {
      sandboxId: 'st-1',
      organizationId: ORG,
      streamId: stream.streamId,
      initialCredit: stream.window,
      argv: ['/bin/sh', '-c', 'head -c 16777216 /dev/zero'],
    });
    // Do not consume: the runner may send at most the window, then must wait.
    await waitFor(() => stream.queued >= 5, { timeoutMs: 3_000, what: 'the first window of output' });
    const early = stream.queued;
    await new Promise((r) => setTimeout(r, 300));
    expect(stream.queued).toBe(early);
    expect(stream.maxQueued).toBeLessThanOrEqual(4);
    let bytes = 0;
    await readUntil(
      stream,
      (f) => f.header.kind === 'exit',
      (f) => {
        if (f.header.kind === 'stdout') bytes += f.payload.length;
      },
    );
    expect(bytes).toBe(16 * MiB);
    expect(stream.maxQueued).toBeLessThanOrEqual(4);
    stream.close();
  }, 60_000);

  it('writes and reads files byte-exact: binary, empty, and large through the stream channel', async () => {
    const every = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const w = await h.client.call('writeFile', { sandboxId: 'st-1', organizationId: ORG, path: '/tmp/bytes.bin', contentBase64: every.toString('base64') });
    expect(w).toEqual({ streamed: false, bytesWritten: 256 });
    const r = await h.client.call('readFile', { sandboxId: 'st-1', organizationId: ORG, path: '/tmp/bytes.bin' });
    expect(r.streamed).toBe(false);
    if (!r.streamed) expect(Buffer.from(r.contentBase64, 'base64').equals(every)).toBe(true);

    await h.client.call('writeFile', { sandboxId: 'st-1', organizationId: ORG, path: '/tmp/empty', contentBase64: '' });
    const empty = await h.client.call('readFile', { sandboxId: 'st-1', organizationId: ORG, path: '/tmp/empty' });
    expect(empty).toEqual({ streamed: false, contentBase64: '', size: 0 });

    // Large: upload over the stream channel, read back over it, compare hashes.
    const total = 50 * MiB * SCALE;
    const up = h.client.openStream();
    const opened = await h.client.call('writeFile', { sandboxId: 'st-1', organizationId: ORG, path: '/tmp/large.bin', streamId: up.streamId });
    if (!opened.streamed) throw new Error('expected a streamed upload');
    up.grantSend(opened.stdinCredit);
    const sentHash = createHash('sha256');
    for (const c of chunks(total)) {
      sentHash.update(c);
      await up.sendBytes('data', c);
    }
    up.send({ kind: 'eof' });
    const done = await readUntil(up, (f) => f.header.kind === 'eof', () => undefined);
    expect(done.header.totalBytes).toBe(total);
    up.close();

    const down = h.client.openStream();
    const meta = await h.client.call('readFile', { sandboxId: 'st-1', organizationId: ORG, path: '/tmp/large.bin', streamId: down.streamId, initialCredit: down.window });
    expect(meta).toEqual({ streamed: true, size: total });
    const recvHash = createHash('sha256');
    let got = 0;
    await readUntil(
      down,
      (f) => f.header.kind === 'eof',
      (f) => {
        if (f.header.kind === 'data') {
          recvHash.update(f.payload);
          got += f.payload.length;
        }
      },
    );
    down.close();
    expect(got).toBe(total);
    expect(recvHash.digest('hex')).toBe(sentHash.digest('hex'));

    const tooBig = await h.client.callError('readFile', { sandboxId: 'st-1', organizationId: ORG, path: '/tmp/large.bin' });
    expect(tooBig.reason).toBe('CWSANDBOX_FILE_TOO_LARGE');
  }, 180_000);

  it('reports a missing file as CWSANDBOX_FILE_NOT_FOUND, and serves stat, listDir and remove', async () => {
    const missing = await h.client.callError('readFile', { sandboxId: 'st-1', organizationId: ORG, path: '/tmp/does-not-exist' });
    expect(missing.code).toBe('not_found');
    expect(missing.reason).toBe('CWSANDBOX_FILE_NOT_FOUND');
    await h.client.call('writeFile', { sandboxId: 'st-1', organizationId: ORG, path: '/tmp/dir/a.txt', contentBase64: Buffer.from('abc').toString('base64') });
    const st = await h.client.call('stat', { sandboxId: 'st-1', organizationId: ORG, path: '/tmp/dir/a.txt' });
    expect(st.stat).toMatchObject({ type: 'file', size: 3 });
    const ls = await h.client.call('listDir', { sandboxId: 'st-1', organizationId: ORG, path: '/tmp/dir' });
    expect(ls.entries.map((e) => e.path.split('/').pop())).toEqual(['a.txt']);
    await h.client.call('remove', { sandboxId: 'st-1', organizationId: ORG, path: '/tmp/dir', recursive: true });
    const gone = await h.client.callError('stat', { sandboxId: 'st-1', organizationId: ORG, path: '/tmp/dir/a.txt' });
    expect(gone.reason).toBe('CWSANDBOX_FILE_NOT_FOUND');
  });

  it('resumes logs from an offset after a dropped subscription with no gap and no duplicate', async () => {
    const lines = 300;
    await h.createRunning(
      'st-logs',
      smallSpec({
        containers: [
          {
            name: 'main',
            image: BASE_IMAGE,
            resources: { cpu: '500m', memory: '128Mi' },
            command: ['/bin/sh', '-c', `i=0; while [ $i -lt ${lines} ]; do echo line-$i; i=$((i+1)); sleep 0.005; done; exec sleep 300`],
          },
        ],
      }),
    );
    const expected = Array.from({ length: lines }, (_, i) => `line-${i}\n`).join('');
    const parts: Buffer[] = [];
    let next = 0;
    const take = (f: StreamFrame): void => {
      if (f.header.kind !== 'stdout' && f.header.kind !== 'stderr') return;
      expect(f.header.offset).toBe(next);
      parts.push(Buffer.from(f.payload));
      next = (f.header.offset ?? 0) + f.payload.length;
    };
    const first = h.client.openStream(4);
    await h.client.call('logs', { sandboxId: 'st-logs', organizationId: ORG, streamId: first.streamId, initialCredit: 4, follow: true });
    await readUntil(first, () => Buffer.concat(parts).toString().includes('line-40\n'), take);
    first.close(); // dropped: no cancel, the subscription simply goes away
    const second = h.client.openStream(4);
    await h.client.call('logs', {
      sandboxId: 'st-logs',
      organizationId: ORG,
      streamId: second.streamId,
      initialCredit: 4,
      follow: true,
      fromOffset: next,
    });
    await readUntil(second, () => Buffer.concat(parts).length >= expected.length, take).catch((e: unknown) => {
      throw new Error(`${String(e)}; got ${Buffer.concat(parts).length}/${expected.length} bytes; events ${JSON.stringify(h.events.slice(-4))}`);
    });
    second.send({ kind: 'cancel' });
    second.close();
    expect(Buffer.concat(parts).toString()).toBe(expected);
  }, 60_000);

  it('cancel kills a streamed exec and still ends the stream with its exit (SIGKILL)', async () => {
    const stream = await openExec(['sh', '-c', 'echo started; sleep 60']);
    await readUntil(stream, (f) => f.header.kind === 'stdout', () => undefined);
    stream.send({ kind: 'cancel' });
    const exit = await readUntil(stream, (f) => f.header.kind === 'exit', () => undefined);
    stream.close();
    expect(exit.header.signal).toBe('SIGKILL');
    expect(exit.header.exitCode).toBe(137);
  }, 60_000);

  it('runs the exec timeout and reports it', async () => {
    const r = await h.client.call('exec', { sandboxId: 'st-1', organizationId: ORG, argv: ['sleep', '10'], timeoutSeconds: 0.3 }).catch((e: unknown) => {
      throw new Error(`${String(e)}; events ${JSON.stringify(h.events.filter((x) => x.sandboxId === 'st-1'))}`);
    });
    expect(r.timedOut).toBe(true);
  });
});

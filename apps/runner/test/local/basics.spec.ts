import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { PaddockError } from '@paddock/contracts';
import { waitFor } from '@paddock/testing';
import type { LogChunk } from '../../src/backend/sandbox-backend';
import { collect, destroyBackend, launchRunning, makeBackend, spec, waitForState, type TestBackend } from './helpers';

describe('local backend: lifecycle, exec, files, logs', () => {
  let t: TestBackend;
  beforeAll(async () => {
    t = makeBackend();
    await launchRunning(t, spec('idle', { env: { GREETING: 'bonjour' }, files: [{ path: '/workspace/seed.txt', content: Buffer.from('seeded') }] }));
  });
  afterAll(async () => {
    const left = await destroyBackend(t);
    expect(left).toEqual({ leftoverProcesses: [], leftoverCgroups: [] });
  });

  it('runs exec inside the sandbox with its env, user, hostname and seeded files', async () => {
    const r = await t.backend.exec('idle', { argv: ['sh', '-c', 'echo "$GREETING"; hostname; id -u; cat /workspace/seed.txt; echo oops >&2; exit 7'] });
    expect(r.exitCode).toBe(7);
    expect(r.stdout.toString()).toBe('bonjour\nidle\n65534\nseeded');
    expect(r.stderr.toString()).toBe('oops\n');
    expect(r.timedOut).toBe(false);
    const echo = await t.backend.exec('idle', { argv: ['echo', 'hello'] });
    expect(echo).toMatchObject({ exitCode: 0, stdoutBytes: 6, stdoutTruncated: false });
    expect(echo.stdout.toString()).toBe('hello\n');
  });

  it('reports exec stdin, caps output with true byte counts, and kills on timeout', async () => {
    const cat = await t.backend.exec('idle', { argv: ['cat'], stdin: Buffer.from('piped input') });
    expect(cat.stdout.toString()).toBe('piped input');
    const flood = await t.backend.exec('idle', { argv: ['head', '-c', '3000000', '/dev/zero'], maxOutputBytes: 1000 });
    expect(flood).toMatchObject({ exitCode: 0, stdoutBytes: 3_000_000, stdoutTruncated: true });
    expect(flood.stdout.length).toBe(1000);
    const started = Date.now();
    const slow = await t.backend.exec('idle', { argv: ['sh', '-c', 'sleep 30 & sleep 30'], timeoutMs: 300 });
    expect(slow.timedOut).toBe(true);
    expect(slow.exitCode).toBe(137);
    expect(Date.now() - started).toBeLessThan(5000);
    const missing = await t.backend.exec('idle', { argv: ['no-such-binary'] });
    expect(missing.exitCode).toBe(127);
    expect(missing.stderr.toString()).toContain('no-such-binary');
  });

  it('streams 100 MiB through cat byte-exactly with bounded runner memory', async () => {
    const proc = await t.backend.execStream('idle', { argv: ['cat'] });
    const block = randomBytes(1024 * 1024);
    const inHash = createHash('sha256');
    const outHash = createHash('sha256');
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    let received = 0;
    const reading = (async () => {
      for await (const c of proc.stdout) {
        outHash.update(c as Buffer);
        received += (c as Buffer).length;
        peak = Math.max(peak, process.memoryUsage().rss);
      }
    })();
    for (let i = 0; i < 100; i++) {
      block[0] = i; // each MiB differs, so a reordering would show
      inHash.update(block);
      if (!proc.stdin.write(Buffer.from(block))) await new Promise((r) => proc.stdin.once('drain', r));
    }
    proc.stdin.end();
    await reading;
    expect(await proc.exited).toEqual({ exitCode: 0, signal: null });
    expect(received).toBe(100 * 1024 * 1024);
    expect(outHash.digest('hex')).toBe(inHash.digest('hex'));
    expect(peak - rss0).toBeLessThan(64 * 1024 * 1024);
  });

  it('stops the command when the consumer stops reading (backpressure)', async () => {
    const proc = await t.backend.execStream('idle', { argv: ['cat', '/dev/zero'] });
    proc.stdout.pause();
    await waitFor(() => proc.stdout.readableLength > 0);
    // Observation windows (not waits): the buffered amount must stop growing while nobody reads.
    await new Promise((r) => setTimeout(r, 300));
    const buffered1 = proc.stdout.readableLength;
    await new Promise((r) => setTimeout(r, 300));
    expect(proc.stdout.readableLength).toBe(buffered1);
    expect(buffered1).toBeLessThan(4 * 1024 * 1024);
    proc.kill('SIGKILL');
    expect((await proc.exited).signal).toBe('SIGKILL');
    proc.stdout.destroy();
  });

  it('runs a command on a TTY and resizes it', async () => {
    const script = 'stty size; i=0; while [ "$(stty size)" != "40 120" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; stty size; read x; echo "got $x"; test -t 1 && echo tty';
    const proc = await t.backend.execStream('idle', { argv: ['sh', '-c', script], tty: true, cols: 100, rows: 30 });
    let text = '';
    proc.stdout.on('data', (d: Buffer) => (text += d.toString()));
    await waitFor(() => text.includes('30 100'), { what: 'the initial size' });
    proc.resize(120, 40);
    await waitFor(() => text.includes('40 120'), { what: 'the new size' });
    proc.stdin.write('go\n');
    expect((await proc.exited).exitCode).toBe(0);
    await waitFor(() => text.includes('tty'));
    expect(text).toContain('got go');
    expect((await collect(proc.stderr)).length).toBe(0);
  });

  it('reads and writes files byte-exactly: binary, empty, 50 MiB; lists, stats, removes', async () => {
    const bin = randomBytes(70_000);
    await t.backend.writeFile('idle', '/workspace/dir/bin.dat', bin);
    expect(await collect(await t.backend.readFile('idle', '/workspace/dir/bin.dat'))).toEqual(bin);
    await t.backend.writeFile('idle', '/tmp/empty', Buffer.alloc(0));
    expect((await collect(await t.backend.readFile('idle', '/tmp/empty'))).length).toBe(0);
    const big = randomBytes(50 * 1024 * 1024);
    await t.backend.writeFile('idle', '/workspace/big.dat', Readable.from([big.subarray(0, 20 << 20), big.subarray(20 << 20)]), 0o600);
    const back = await collect(await t.backend.readFile('idle', '/workspace/big.dat'));
    expect(back.length).toBe(big.length);
    expect(back.equals(big)).toBe(true);
    const st = await t.backend.stat('idle', '/workspace/big.dat');
    expect(st).toMatchObject({ type: 'file', size: 50 * 1024 * 1024, mode: 0o600 });
    const list = await t.backend.listDir('idle', '/workspace');
    expect(list.map((e) => e.path).sort()).toEqual(['/workspace/big.dat', '/workspace/dir', '/workspace/seed.txt']);
    expect(list.find((e) => e.path === '/workspace/dir')?.type).toBe('directory');
    await t.backend.remove('idle', '/workspace/dir', true);
    await t.backend.remove('idle', '/workspace/big.dat', false);
    expect((await t.backend.listDir('idle', '/workspace')).map((e) => e.path)).toEqual(['/workspace/seed.txt']);
  });

  it('maps missing paths, escapes and read-only paths to API errors', async () => {
    const missing = await t.backend.readFile('idle', '/workspace/nope').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(PaddockError);
    expect(missing).toMatchObject({ code: 'not_found', reason: 'CWSANDBOX_FILE_NOT_FOUND' });
    await expect(t.backend.stat('idle', '/nope/at/all')).rejects.toMatchObject({ reason: 'CWSANDBOX_FILE_NOT_FOUND' });
    // A symlink planted inside the sandbox resolves inside the sandbox root, never on the host.
    await t.backend.exec('idle', { argv: ['ln', '-s', '../../../../../../../../etc/shadow', '/workspace/escape'] });
    await expect(t.backend.readFile('idle', '/workspace/escape')).rejects.toMatchObject({ reason: 'CWSANDBOX_FILE_NOT_FOUND' });
    await expect(t.backend.writeFile('idle', '/usr/bin/evil', Buffer.from('x'))).rejects.toMatchObject({ code: 'permission_denied' });
    await expect(t.backend.readFile('nobody-here', '/x')).rejects.toMatchObject({ reason: 'CWSANDBOX_SANDBOX_NOT_FOUND' });
  });

  it('resumes logs from an offset after an aborted follow, with no gap and no duplicate', async () => {
    const cmd = 'i=0; while [ $i -lt 60 ]; do echo "line $i"; echo "err $i" >&2; i=$((i+1)); sleep 0.02; done';
    await launchRunning(t, spec('talker', { command: ['sh', '-c', cmd] }));
    const abort = new AbortController();
    const first: LogChunk[] = [];
    for await (const c of t.backend.logs('talker', { follow: true, signal: abort.signal })) {
      first.push(c);
      if (first.length >= 10) abort.abort();
    }
    const last = first[first.length - 1] as LogChunk;
    const resumeAt = last.offset + last.data.length;
    const rest: LogChunk[] = [];
    for await (const c of t.backend.logs('talker', { follow: true, fromOffset: resumeAt })) rest.push(c);
    const all = [...first, ...rest];
    for (let i = 1; i < all.length; i++) {
      const prev = all[i - 1] as LogChunk;
      expect((all[i] as LogChunk).offset).toBe(prev.offset + prev.data.length);
    }
    const stdout = all.filter((c) => c.stream === 'stdout').map((c) => c.data.toString()).join('');
    const stderr = all.filter((c) => c.stream === 'stderr').map((c) => c.data.toString()).join('');
    expect(stdout).toBe(Array.from({ length: 60 }, (_, i) => `line ${i}\n`).join(''));
    expect(stderr).toBe(Array.from({ length: 60 }, (_, i) => `err ${i}\n`).join(''));
    const done = await waitForState(t, 'talker', ['STATE_COMPLETED', 'STATE_FAILED']);
    expect(done).toMatchObject({ state: 'STATE_COMPLETED', reason: 'EXITED', exitCode: 0 });
    const since: LogChunk[] = [];
    for await (const c of t.backend.logs('talker', { sinceTime: new Date(Date.now() + 60_000) })) since.push(c);
    expect(since).toEqual([]);
    let sinceStart = 0;
    for await (const c of t.backend.logs('talker', { sinceTime: (first[0] as LogChunk).time })) sinceStart += c.data.length;
    expect(sinceStart).toBe(stdout.length + stderr.length);
    const tail = [];
    for await (const c of t.backend.logs('talker', { tailLines: 2 })) tail.push(c.data.toString());
    expect(tail.join('').split('\n').filter(Boolean)).toHaveLength(2);
    await expect(t.backend.exec('talker', { argv: ['true'] })).rejects.toMatchObject({ reason: 'CWSANDBOX_SANDBOX_NOT_RUNNING' });
  });

  it('reports exits, start failures, unknown images, and is idempotent', async () => {
    await t.backend.launch(spec('fails', { command: ['sh', '-c', 'exit 3'] }));
    expect(await waitForState(t, 'fails', ['STATE_COMPLETED', 'STATE_FAILED'])).toMatchObject({ state: 'STATE_FAILED', reason: 'EXITED', exitCode: 3 });
    await t.backend.launch(spec('nocmd', { command: ['/no/such/program'] }));
    const nocmd = await waitForState(t, 'nocmd', ['STATE_COMPLETED', 'STATE_FAILED']);
    expect(nocmd).toMatchObject({ state: 'STATE_FAILED', reason: 'FAILED_TO_START' });
    expect(nocmd.message).toContain('/no/such/program');
    await t.backend.launch(spec('noimg', { image: 'acme/unknown:1' }));
    const noimg = await waitForState(t, 'noimg', ['STATE_FAILED']);
    expect(noimg).toMatchObject({ reason: 'IMAGE_NOT_FOUND' });
    expect(noimg.message).toContain('acme/unknown:1');
    const before = t.events.filter((e) => e.sandboxId === 'idle').length;
    await t.backend.launch(spec('idle'));
    expect(t.events.filter((e) => e.sandboxId === 'idle').length).toBe(before);
    expect(t.backend.capabilities()).toMatchObject({ isolation: 'namespaces', egressRuleKinds: ['cidr'], supportsEgress: true, supportsPrivileged: false, images: ['paddock/base'] });
    for (const id of ['fails', 'nocmd', 'noimg']) await t.backend.reap(id, 'RUNNER_DELETED');
  });

  it('stops with a grace period and reports STOPPED_BY_USER', async () => {
    await launchRunning(t, spec('stoppable', { command: ['sh', '-c', 'trap "echo bye; exit 0" TERM; echo ready; while :; do sleep 0.1; done'] }));
    // Stop only once the trap is installed (RUNNING means exec'd, not initialised).
    await waitFor(async () => {
      for await (const c of t.backend.logs('stoppable', {})) if (c.data.toString().includes('ready')) return true;
      return false;
    });
    await t.backend.stop('stoppable', 5, 'STOPPED_BY_USER');
    const states = t.events.filter((e) => e.sandboxId === 'stoppable').map((e) => e.state);
    expect(states).toEqual(['STATE_CREATING', 'STATE_RUNNING', 'STATE_TERMINATING', 'STATE_COMPLETED']);
    const chunks = [];
    for await (const c of t.backend.logs('stoppable', {})) chunks.push(c.data.toString());
    expect(chunks.join('')).toBe('ready\nbye\n');
    await t.backend.reap('stoppable', 'STOPPED_BY_USER');
  });

  it('stops a sandbox that is still being created', async () => {
    await t.backend.launch(spec('early-stop', { command: ['sleep', '1000'] }));
    await t.backend.stop('early-stop', 0, 'STOPPED_BY_USER');
    expect(await waitForState(t, 'early-stop', ['STATE_COMPLETED', 'STATE_FAILED'])).toMatchObject({ reason: 'STOPPED_BY_USER' });
    await t.backend.reap('early-stop', 'STOPPED_BY_USER');
    expect(t.backend.cgroupTree().listSandboxes()).toEqual(['idle']);
  });
});

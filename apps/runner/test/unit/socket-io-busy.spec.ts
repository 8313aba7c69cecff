import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { connectUnix } from '../../src/backend/local/socket-io';

/**
 * A listener whose backlog is full (a burst of calls on one sandbox's supervisor): the connect
 * waits for room, bounded, instead of failing at once with EAGAIN.
 */
describe('connecting to a listener with a full backlog', () => {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  const open: Socket[] = [];
  afterEach(() => {
    for (const s of open.splice(0)) s.destroy();
    for (const c of children.splice(0)) c.kill('SIGKILL');
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  /** A listener (backlog 0) that accepts nothing until `acceptAfterMs`, then everything, answering each. */
  async function slowListener(acceptAfterMs: number): Promise<string> {
    const dir = mkdtempSync(join(tmpdir(), 'paddock-busy-'));
    dirs.push(dir);
    const path = join(dir, 'sock');
    const script = [
      'import socket, sys, time',
      's = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(0)',
      'print("ready", flush=True)',
      'time.sleep(float(sys.argv[2]) / 1000)',
      'while True:',
      '  c, _ = s.accept(); c.sendall(b"ok"); c.close()',
    ].join('\n');
    const child = spawn('python3', ['-c', script, path, String(acceptAfterMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    await new Promise<void>((resolve) => child.stdout?.once('data', () => resolve()));
    return path;
  }

  /** Connections until the backlog is full: the next connect fails at once with EAGAIN. */
  async function fill(path: string): Promise<void> {
    for (let i = 0; i < 16; i++) {
      try {
        open.push(await connectUnix(path, { busyWaitMs: 0 }));
      } catch (e) {
        expect((e as NodeJS.ErrnoException).code).toBe('EAGAIN');
        return;
      }
    }
    throw new Error('the backlog never filled');
  }

  it('waits for room and connects once the listener accepts again', async () => {
    const path = await slowListener(400);
    await fill(path);
    const t0 = Date.now();
    const sock = await connectUnix(path);
    open.push(sock);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(100);
    const data = await new Promise<string>((resolve) => sock.once('data', (b: Buffer) => resolve(b.toString())));
    expect(data).toBe('ok');
  });

  it('gives up with EAGAIN once its wait is over', async () => {
    const path = await slowListener(60_000);
    await fill(path);
    const t0 = Date.now();
    await expect(connectUnix(path, { busyWaitMs: 150 })).rejects.toMatchObject({ code: 'EAGAIN' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(100);
  });

  it('does not wait on anything but a full backlog', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'paddock-busy-'));
    dirs.push(dir);
    const t0 = Date.now();
    await expect(connectUnix(join(dir, 'nobody'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(Date.now() - t0).toBeLessThan(1_000);
  });
});

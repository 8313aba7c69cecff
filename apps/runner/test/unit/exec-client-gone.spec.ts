import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PaddockError } from '@paddock/contracts';
import { runExec, startExec } from '../../src/backend/local/exec-client';

/**
 * A supervisor that dies while an exec connects: it accepted (or the kernel queued) the three
 * connections and then closed them, so our request writes fail with EPIPE or ECONNRESET. The exec
 * must fail as "supervisor gone" and never as an uncaught socket error, which would end the runner.
 */
describe('exec client against a supervisor that went away', () => {
  let dir: string | undefined;
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function dyingSupervisor(drop: (conn: Socket) => void): Promise<string> {
    dir = mkdtempSync(join(tmpdir(), 'paddock-exec-gone-'));
    const path = join(dir, 'sock');
    server = createServer(drop);
    await new Promise<void>((resolve) => server!.listen(path, resolve));
    return path;
  }

  const notRunning = (): PaddockError => new PaddockError('failed_precondition', 'not running', { reason: 'CWSANDBOX_INVALID_REQUEST' });
  /** The errno the exec failed with ('resolved' if it did not fail). */
  async function errnoOf(exec: Promise<unknown>): Promise<string> {
    try {
      await exec;
      return 'resolved';
    } catch (e) {
      return String((e as { code?: unknown }).code);
    }
  }
  const uncaught: Error[] = [];
  const onUncaught = (e: Error): void => void uncaught.push(e);

  it.each([
    ['closed at once', (c: Socket) => c.destroy()],
    ['closed once a request arrived', (c: Socket) => c.once('data', () => c.destroy())],
    ['closed after a turn', (c: Socket) => setImmediate(() => c.destroy())],
  ])('fails the exec with a socket errno, never uncaught (%s)', async (_name, drop) => {
    const path = await dyingSupervisor(drop);
    process.on('uncaughtException', onUncaught);
    try {
      for (let i = 0; i < 20; i++) {
        const streaming = startExec(path, { argv: ['true'], env: {} }, notRunning);
        expect(await errnoOf(streaming)).toMatch(/^E[A-Z]+$/);
        const unary = runExec({ supervisor: path }, { argv: ['true'], env: {}, stdin: Buffer.from('x') }, notRunning);
        expect(await errnoOf(unary)).toMatch(/^E[A-Z]+$/);
      }
      // Late EPIPEs are emitted on a later turn.
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});

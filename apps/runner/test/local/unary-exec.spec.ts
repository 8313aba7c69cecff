import { join } from 'node:path';
import { PaddockError } from '@paddock/contracts';
import { NOT_UNARY, runUnaryExec } from '../../src/backend/local/unary-exec';
import { destroyBackend, launchRunning, makeBackend, spec, type TestBackend } from './helpers';

/**
 * The one-connection unary exec against a real sandbox's supervisor and exec daemon: what it
 * serves itself, and what it hands back (EUNARY) to the three-connection path.
 */
describe('unary exec on one connection', () => {
  let t: TestBackend;
  const socketOf = (id: string): string => join(t.stateDir, 'sandboxes', id, 'sup.sock');
  const notRunning = (): PaddockError => new PaddockError('failed_precondition', 'not running');
  const env = { PATH: '/usr/bin:/bin' };

  beforeAll(async () => {
    t = makeBackend();
    await launchRunning(t, spec('unary-1', { command: ['sleep', '600'] }));
    await launchRunning(
      t,
      spec('unary-pod', {
        command: ['sleep', '600'],
        primaryName: 'app',
        sidecars: [{ name: 'side', image: '', command: ['sleep', '600'], env: { ROLE: 'side' }, files: [], volumeMounts: [] }],
      }),
    );
  }, 60_000);

  afterAll(async () => {
    const left = await destroyBackend(t);
    expect(left.leftoverProcesses).toEqual([]);
  });

  it('is served by the exec daemon: output, byte counts and exit status, as the backend reports them', async () => {
    const argv = ['sh', '-c', 'echo out; echo oops >&2; exit 3'];
    const r = await runUnaryExec(socketOf('unary-1'), { argv, env, maxOutputBytes: 1 << 20 }, notRunning);
    expect(r).not.toBe(NOT_UNARY);
    expect(r).toMatchObject({ exitCode: 3, stdoutBytes: 4, stderrBytes: 5, stdoutTruncated: false, timedOut: false });
    if (r === NOT_UNARY) return;
    expect([r.stdout.toString(), r.stderr.toString()]).toEqual(['out\n', 'oops\n']);
    // The backend's own exec (no stdin) gives the same.
    const b = await t.backend.exec('unary-1', { argv });
    expect([b.exitCode, b.stdout.toString(), b.stderr.toString()]).toEqual([3, 'out\n', 'oops\n']);
  });

  it('caps what it keeps while counting everything the command wrote', async () => {
    const r = await runUnaryExec(
      socketOf('unary-1'),
      { argv: ['sh', '-c', 'head -c 3000000 /dev/zero'], env, maxOutputBytes: 1000 },
      notRunning,
    );
    expect(r).toMatchObject({ exitCode: 0, stdoutBytes: 3_000_000, stdoutTruncated: true });
    if (r !== NOT_UNARY) expect(r.stdout.length).toBe(1000);
  });

  it('kills the command on timeout and says so', async () => {
    const t0 = Date.now();
    const r = await runUnaryExec(socketOf('unary-1'), { argv: ['sleep', '30'], env, timeoutMs: 300, maxOutputBytes: 1000 }, notRunning);
    expect(r).toMatchObject({ exitCode: 137, timedOut: true });
    expect(Date.now() - t0).toBeLessThan(10_000);
  });

  it("hands a sidecar's command back to the three-connection path, which runs it in the sidecar", async () => {
    const argv = ['sh', '-c', 'echo "$ROLE"'];
    const r = await runUnaryExec(socketOf('unary-pod'), { argv, env, container: 'side', maxOutputBytes: 1000 }, notRunning);
    expect(r).toBe(NOT_UNARY);
    const b = await t.backend.exec('unary-pod', { argv, container: 'side' });
    expect(b.stdout.toString()).toBe('side\n');
    // The primary, named, is the daemon's.
    expect(await runUnaryExec(socketOf('unary-pod'), { argv: ['true'], env, container: 'app', maxOutputBytes: 1000 }, notRunning)).toMatchObject({ exitCode: 0 });
  });

  it('an exec with stdin still goes the three-connection way', async () => {
    const b = await t.backend.exec('unary-1', { argv: ['cat'], stdin: Buffer.from('through stdin') });
    expect([b.exitCode, b.stdout.toString()]).toEqual([0, 'through stdin']);
  });
});

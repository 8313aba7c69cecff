import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PaddockError } from '@paddock/contracts';
import { NOT_UNARY, runUnaryExec } from '../../src/backend/local/unary-exec';
import { destroyBackend, launchRunning, makeBackend, spec, waitForState, type TestBackend } from './helpers';

/**
 * The one-connection unary exec against a real sandbox's supervisor and exec daemon: what it
 * serves itself, and what it hands back (EUNARY) to the three-connection path.
 */
describe('unary exec on one connection', () => {
  let t: TestBackend;
  const dirOf = (id: string): string => join(t.stateDir, 'sandboxes', id);
  // The supervisor's socket only: the path every unary exec had before the daemon had its own.
  const socketOf = (id: string): { supervisor: string } => ({ supervisor: join(dirOf(id), 'sup.sock') });
  const daemonOf = (id: string): string => join(dirOf(id), 'exec.sock');
  /** The exec daemon of a sandbox: the supervisor's child called paddock-execd. */
  const execdOf = (id: string): number | undefined => {
    const sup = Number(readFileSync(join(dirOf(id), 'supervisor.pid'), 'utf8'));
    const kids = readFileSync(`/proc/${sup}/task/${sup}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
    return kids.find((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'paddock-execd';
      } catch {
        return false;
      }
    });
  };
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

  it("goes to the exec daemon's own socket once the daemon runs, without the supervisor", async () => {
    await t.backend.exec('unary-1', { argv: ['true'] });
    expect(existsSync(daemonOf('unary-1'))).toBe(true);
    // No supervisor to ask: served by the daemon alone.
    const r = await runUnaryExec({ supervisor: join(dirOf('unary-1'), 'nobody.sock'), daemon: daemonOf('unary-1') }, { argv: ['sh', '-c', 'echo direct'], env, maxOutputBytes: 1000 }, notRunning);
    expect(r).toMatchObject({ exitCode: 0 });
    if (r !== NOT_UNARY) expect(r.stdout.toString()).toBe('direct\n');
    // A sidecar's command is the supervisor's even with the daemon's socket at hand.
    const side = await runUnaryExec({ ...socketOf('unary-pod'), daemon: daemonOf('unary-pod') }, { argv: ['true'], env, container: 'side', maxOutputBytes: 1000 }, notRunning);
    expect(side).toBe(NOT_UNARY);
  });

  it("asks the supervisor when the daemon's socket is not there", async () => {
    const r = await runUnaryExec({ ...socketOf('unary-1'), daemon: join(dirOf('unary-1'), 'missing.sock') }, { argv: ['echo', 'via supervisor'], env, maxOutputBytes: 1000 }, notRunning);
    expect(r).toMatchObject({ exitCode: 0 });
    if (r !== NOT_UNARY) expect(r.stdout.toString()).toBe('via supervisor\n');
  });

  it('a daemon the workload killed: the next exec goes through the supervisor, which starts one with a new socket', async () => {
    await t.backend.exec('unary-1', { argv: ['true'] });
    const before = execdOf('unary-1');
    expect(before).toBeDefined();
    process.kill(before as number, 'SIGKILL');
    // Its socket is still there, but nobody listens: the runner is refused and asks the supervisor.
    for (let i = 0; i < 200 && execdOf('unary-1') === before; i++) await new Promise((r) => setTimeout(r, 10));
    const r = await t.backend.exec('unary-1', { argv: ['echo', 'after'] });
    expect([r.exitCode, r.stdout.toString()]).toEqual([0, 'after\n']);
    const after = execdOf('unary-1');
    expect(after).toBeDefined();
    expect(after).not.toBe(before);
    // The new daemon's socket serves directly again.
    const d = await runUnaryExec({ supervisor: join(dirOf('unary-1'), 'nobody.sock'), daemon: daemonOf('unary-1') }, { argv: ['true'], env, maxOutputBytes: 1000 }, notRunning);
    expect(d).toMatchObject({ exitCode: 0 });
  });

  it("a paused sandbox's daemon socket is away (an exec is refused as not running), and back once resumed", async () => {
    await t.backend.exec('unary-1', { argv: ['true'] });
    await t.backend.pause('unary-1');
    try {
      expect(existsSync(daemonOf('unary-1'))).toBe(false);
      await expect(runUnaryExec({ ...socketOf('unary-1'), daemon: daemonOf('unary-1') }, { argv: ['true'], env, maxOutputBytes: 1000 }, notRunning)).rejects.toThrow('not running');
    } finally {
      await t.backend.resume('unary-1');
    }
    expect(existsSync(daemonOf('unary-1'))).toBe(true);
    expect(await t.backend.exec('unary-1', { argv: ['true'] })).toMatchObject({ exitCode: 0 });
  });

  it("a stopping sandbox's daemon socket is gone at once: an exec in its grace period is refused", async () => {
    // A main process that ignores SIGTERM: the sandbox stays TERMINATING for its grace period.
    await launchRunning(t, spec('unary-stop', { command: ['sh', '-c', 'trap "" TERM; sleep 600 & wait'] }));
    await t.backend.exec('unary-stop', { argv: ['true'] });
    expect(existsSync(daemonOf('unary-stop'))).toBe(true);
    const stopped = t.backend.stop('unary-stop', 3, 'STOPPED_BY_USER');
    await waitForState(t, 'unary-stop', ['STATE_TERMINATING']);
    expect(existsSync(dirOf('unary-stop'))).toBe(true);
    expect(readdirSync(dirOf('unary-stop')).filter((f) => f.startsWith('exec.sock'))).toEqual([]);
    await expect(runUnaryExec({ ...socketOf('unary-stop'), daemon: daemonOf('unary-stop') }, { argv: ['true'], env, maxOutputBytes: 1000 }, notRunning)).rejects.toThrow('not running');
    await stopped;
  });

  it("execs with stdin while the supervisor's backlog is full all run: their connects wait for room", async () => {
    // The supervisor stopped (SIGSTOP) while 60 execs with stdin connect: 180 connections against
    // its backlog of 128, so some find it full (without the wait they failed with connect EAGAIN).
    // 60 stay well under the sandbox's open-files limit, which the exec daemon shares with the
    // commands whose stdio it holds.
    const sup = Number(readFileSync(join(dirOf('unary-1'), 'supervisor.pid'), 'utf8'));
    process.kill(sup, 'SIGSTOP');
    let execs: Promise<{ exitCode: number | null; stdout: Buffer }>[];
    try {
      execs = Array.from({ length: 60 }, (_, i) => t.backend.exec('unary-1', { argv: ['cat'], stdin: Buffer.from(`in ${i}`) }));
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      process.kill(sup, 'SIGCONT');
    }
    const done = await Promise.all(execs);
    expect(done.map((r) => [r.exitCode, r.stdout.toString()])).toEqual(Array.from({ length: 60 }, (_, i) => [0, `in ${i}`]));
  }, 60_000);

  it('an exec with stdin still goes the three-connection way', async () => {
    const b = await t.backend.exec('unary-1', { argv: ['cat'], stdin: Buffer.from('through stdin') });
    expect([b.exitCode, b.stdout.toString()]).toEqual([0, 'through stdin']);
  });
});

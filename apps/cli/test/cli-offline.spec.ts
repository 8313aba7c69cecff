import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildProgram, run } from '../src/program';
import { completeWords } from '../src/commands/completion';
import { configPath, effectiveSettings, saveConfig } from '../src/config';
import type { CwicConfig } from '../src/config';
import { waitShowingCreation, type CreationStatus } from '../src/actions/creation-progress';
import { Ctx, type Io } from '../src/context';
import { EXIT, exitCodeForApiCode, violationLine } from '../src/errors';

function memoryIo(env: NodeJS.ProcessEnv = {}, stdin = ''): Io & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (s) => void out.push(s), stderr: (s) => void err.push(s), readStdin: () => stdin, stdinIsTTY: false, stdoutIsTTY: false, env };
}

describe('cwic without a server', () => {
  it('--help succeeds and lists the command groups', async () => {
    const io = memoryIo();
    expect(await run(['--help'], io)).toBe(0);
    expect(io.out.join('')).toMatch(/sandbox/);
    expect(io.out.join('')).toMatch(/auth/);
  });

  it('usage errors exit 2', async () => {
    const io = memoryIo();
    expect(await run(['sandbox', 'runner', 'nosuchverb'], io)).toBe(2);
    expect(await run(['sandbox', 'runner', 'get', '-o', 'xml'], memoryIo({ PADDOCK_API_KEY: 't' }))).toBe(2);
  });

  it('delete without --yes and without a terminal refuses with gh wording, exit 2', async () => {
    const io = memoryIo({ PADDOCK_API_KEY: 't' });
    expect(await run(['sandbox', 'runner', 'delete', 'r1'], io)).toBe(2);
    expect(io.err.join('')).toContain('--yes required when not running interactively');
  });

  it('create --print-template prints a runner the seeds recognise', async () => {
    const io = memoryIo();
    expect(await run(['sandbox', 'runner', 'create', '--print-template'], io)).toBe(0);
    expect(io.out.join('')).toContain('release_channel: RELEASE_CHANNEL_STABLE');
  });

  it('reports an unreachable server as an error with the action, exit 1', async () => {
    const io = memoryIo({ PADDOCK_API_KEY: 't', PADDOCK_CONTROL_PLANE_URL: 'http://127.0.0.1:9' });
    expect(await run(['sandbox', 'runner', 'get'], io)).toBe(1);
    expect(io.err.join('')).toMatch(/^Error: listing runners: unavailable: cannot reach http:\/\/127\.0\.0\.1:9/);
  });

  it('stores credentials under XDG_CONFIG_HOME with mode 0600; env overrides the file', () => {
    const home = mkdtempSync(join(tmpdir(), 'cwic-home-'));
    const env = { XDG_CONFIG_HOME: home };
    const p = saveConfig({ token: 'file-token', controlPlaneUrl: 'http://cp:1' }, env);
    expect(p).toBe(join(home, 'cwic', 'config.json'));
    expect(statSync(p).mode & 0o777).toBe(0o600);
    expect((JSON.parse(readFileSync(p, 'utf8')) as CwicConfig).token).toBe('file-token');
    expect(effectiveSettings(env).token).toBe('file-token');
    expect(effectiveSettings({ ...env, PADDOCK_API_KEY: 'env-token' }).token).toBe('env-token');
    expect(effectiveSettings({ ...env, PADDOCK_CONTROL_PLANE_URL: 'http://x:2/' }).controlPlaneUrl).toBe('http://x:2');
    expect(configPath({ XDG_CONFIG_HOME: 'relative', HOME: '/home/u' })).toBe('/home/u/.config/cwic/config.json');
  });

  it('completes commands and options', () => {
    const { program } = buildProgram(memoryIo());
    expect(completeWords(program, ['sandbox', 'runner', 'p'])).toEqual(['policy']);
    expect(completeWords(program, ['sandbox', 'runner', 'get', '--c'])).toEqual(['--cluster', '--connection-status']);
  });

  it('prints completion scripts for bash, zsh and fish', async () => {
    for (const shell of ['bash', 'zsh', 'fish']) {
      const io = memoryIo();
      expect(await run(['completion', shell], io)).toBe(0);
      expect(io.out.join('')).toContain('__complete');
    }
    expect(await run(['completion', 'tcsh'], memoryIo())).toBe(2);
  });

  it('maps every server code to the documented exit code', () => {
    expect(EXIT).toEqual({ ok: 0, refused: 1, usage: 2, notFound: 3, conflict: 4 });
    expect(exitCodeForApiCode('not_found')).toBe(3);
    for (const c of ['failed_precondition', 'already_exists', 'aborted']) expect(exitCodeForApiCode(c)).toBe(4);
    for (const c of ['invalid_argument', 'permission_denied', 'unauthenticated', 'resource_exhausted', 'unavailable', 'internal']) expect(exitCodeForApiCode(c)).toBe(1);
    expect(violationLine('a.b', 'a.b: must be set')).toBe('  - a.b: must be set');
    expect(violationLine('a.b', 'must be set')).toBe('  - a.b: must be set');
  });

  it('draws progress only when stdout and stderr are terminals', async () => {
    const tty = { ...memoryIo(), stdoutIsTTY: true, stderrIsTTY: true };
    const slow = (): Promise<string> => new Promise((resolve) => setTimeout(() => resolve('done'), 60));
    expect(await new Ctx(tty, {}).withProgress('waiting for x', slow, 10)).toBe('done');
    expect(tty.err.join('')).toMatch(/waiting for x \(0s\)/);
    expect(tty.err.at(-1)).toBe('\r\x1b[2K');
    const piped = memoryIo();
    expect(await new Ctx(piped, {}).withProgress('waiting for x', slow, 10)).toBe('done');
    expect(piped.err).toEqual([]);
    const redirectedErr = { ...memoryIo(), stdoutIsTTY: true, stderrIsTTY: false };
    await new Ctx(redirectedErr, {}).withProgress('waiting for x', slow, 10);
    expect(redirectedErr.err).toEqual([]);
  });
  it('prints each new CREATING message of a waited-for sandbox on a terminal stderr, then its state; nothing when stderr is redirected', async () => {
    const sequence: CreationStatus[] = [
      { state: 'STATE_PENDING' },
      { state: 'STATE_CREATING', message: 'pulling image r/app:v1 (3 layers, 50.0 MiB)' },
      { state: 'STATE_CREATING', message: 'pulling image r/app:v1 (3 layers, 50.0 MiB)' },
      { state: 'STATE_CREATING', message: 'pulling image r/app:v1: 25.0 of 50.0 MiB' },
      { state: 'STATE_CREATING', message: 'unpacking image r/app:v1' },
      { state: 'STATE_RUNNING', message: 'unpacking image r/app:v1' },
    ];
    // The wait settles once the watcher has read the RUNNING status, as the long poll would.
    const drive = (): { read: () => Promise<CreationStatus>; wait: () => Promise<string>; reads: () => number } => {
      let i = 0;
      let settle: (v: string) => void = () => undefined;
      const settled = new Promise<string>((resolve) => (settle = resolve));
      return {
        read: () => {
          const s = sequence[Math.min(i++, sequence.length - 1)] as CreationStatus;
          if (s.state === 'STATE_RUNNING') settle('started');
          return Promise.resolve(s);
        },
        wait: () => settled,
        reads: () => i,
      };
    };
    const tty = { ...memoryIo(), stdoutIsTTY: false, stderrIsTTY: true };
    const d = drive();
    expect(await waitShowingCreation(new Ctx(tty, {}), 'sb-1', d.wait, d.read, 1)).toBe('started');
    expect(tty.out).toEqual([]);
    expect(tty.err).toEqual([
      '\r\x1b[2Ksandbox sb-1: pulling image r/app:v1 (3 layers, 50.0 MiB)\n',
      '\r\x1b[2Ksandbox sb-1: pulling image r/app:v1: 25.0 of 50.0 MiB\n',
      '\r\x1b[2Ksandbox sb-1: unpacking image r/app:v1\n',
      '\r\x1b[2Ksandbox sb-1: RUNNING\n',
    ]);

    const redirected = { ...memoryIo(), stdoutIsTTY: true, stderrIsTTY: false };
    const quiet = drive();
    const settledQuietly = waitShowingCreation(new Ctx(redirected, {}), 'sb-2', quiet.wait, quiet.read, 1);
    // Only the test reads the status here: the CLI does not poll when nobody watches.
    while (quiet.reads() < sequence.length) await quiet.read();
    expect(await settledQuietly).toBe('started');
    expect(quiet.reads()).toBe(sequence.length);
    expect(redirected.err).toEqual([]);
  });
});

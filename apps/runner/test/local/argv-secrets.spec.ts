import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { destroyBackend, launchRunning, makeBackend, spec, type TestBackend } from './helpers';

/** Every process's command line on the host, as any host user can read them. */
function hostCommandLines(): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      out.push(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
    } catch {
      // the process ended between the listing and the read
    }
  }
  return out;
}

/**
 * A sandbox's env values (secrets from the secret stores among them) reach its processes, but no
 * host process's command line carries them: bwrap takes its `--setenv` options from a file
 * descriptor, which it closes before the workload starts.
 */
describe('local backend: env values stay out of host command lines', () => {
  let t: TestBackend;
  const canary = randomBytes(16).toString('hex');
  beforeAll(async () => {
    t = makeBackend();
    await launchRunning(
      t,
      spec('argv', { env: { SECRET_VALUE: canary }, command: ['sh', '-c', 'ls /proc/self/fd > /workspace/fds; exec sleep infinity'] }),
    );
  });
  afterAll(async () => {
    const left = await destroyBackend(t);
    expect(left).toEqual({ leftoverProcesses: [], leftoverCgroups: [] });
  });

  it('gives the sandbox its env while no host command line shows a value', async () => {
    const r = await t.backend.exec('argv', { argv: ['sh', '-c', 'printf %s "$SECRET_VALUE"'] });
    expect(r.stdout.toString()).toBe(canary);
    const lines = hostCommandLines();
    // The sandbox's bwrap is there, naming its mounts, with its env behind `--args`.
    expect(lines.some((l) => l.startsWith('bwrap\0') && l.includes('\0--args\0') && l.includes(t.stateDir))).toBe(true);
    expect(lines.filter((l) => l.includes(canary))).toEqual([]);
  });

  it('leaves the argument descriptor closed in the workload', async () => {
    const fds = await t.backend.exec('argv', { argv: ['cat', '/workspace/fds'] });
    // stdin, stdout, stderr, and the directory `ls` itself opened: nothing inherited beyond stdio.
    const open = fds.stdout.toString().split('\n').filter(Boolean).map(Number);
    expect(open.filter((fd) => fd > 2 && fd !== Math.max(...open))).toEqual([]);
  });
});

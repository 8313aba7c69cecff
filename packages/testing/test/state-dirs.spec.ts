import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processesUsing, removeStateDir } from '../src';

describe('removeStateDir', () => {
  it('stops the processes naming the directory, detaches its mounts, then deletes it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'paddock-statedir-'));
    const disk = join(dir, 'sandboxes', 'sb-1', 'disk');
    mkdirSync(disk, { recursive: true });
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', disk]).status).toBe(0);
    writeFileSync(join(disk, 'data'), 'x');
    // Like a sandbox supervisor: its command line names the state directory.
    const holder = spawn('/bin/sh', ['-c', 'sleep 60', join(dir, 'sandboxes', 'sb-1', 'plan.json')], { stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((r) => holder.once('exit', (_c, s) => r(s)));

    await removeStateDir(dir);

    expect(await exited).toBe('SIGTERM');
    expect(readFileSync('/proc/self/mounts', 'utf8')).not.toContain(dir);
    expect(existsSync(dir)).toBe(false);
  });

  it('also stops a process that names the directory only in its environment (a runner)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'paddock-statedir-'));
    // sleep itself, not a shell running it: a shell's forked child inherits the
    // environment too, and would be a second (correct) match the assertion below can't expect.
    const runner = spawn('sleep', ['60'], { stdio: 'ignore', env: { PATH: process.env.PATH, PADDOCK_RUNNER_STATE_DIR: join(dir, 'state') } });
    const exited = new Promise<NodeJS.Signals | null>((r) => runner.once('exit', (_c, s) => r(s)));
    expect(processesUsing(dir).map((p) => Number(p.split(' ')[0]))).toEqual([runner.pid]);

    await removeStateDir(dir);

    expect(await exited).toBe('SIGTERM');
    expect(processesUsing(dir)).toEqual([]);
    expect(existsSync(dir)).toBe(false);
  });

  it('deletes a directory nothing uses, and accepts one that is already gone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'paddock-statedir-'));
    writeFileSync(join(dir, 'f'), 'y');
    await removeStateDir(dir);
    expect(existsSync(dir)).toBe(false);
    await expect(removeStateDir(dir)).resolves.toBeUndefined();
  });
});

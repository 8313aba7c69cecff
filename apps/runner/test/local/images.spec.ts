import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { destroyBackend, launchRunning, makeBackend, spec, TEST_STATE_ROOT, waitForState } from './helpers';

describe('local backend: images', () => {
  const rootfs = join(TEST_STATE_ROOT, `rootfs-${process.pid}`);
  beforeAll(() => {
    // A tiny root filesystem: the host's /usr (bind, read-only) plus its own /etc.
    mkdirSync(join(rootfs, 'usr'), { recursive: true });
    mkdirSync(join(rootfs, 'etc'), { recursive: true });
    for (const l of ['bin', 'lib', 'lib64']) symlinkSync(`usr/${l}`, join(rootfs, l));
    writeFileSync(join(rootfs, 'etc', 'os-release'), 'NAME=paddock-test-image\n');
    execFileSync('mount', ['--bind', '-o', 'ro', '/usr', join(rootfs, 'usr')]);
  });
  afterAll(() => {
    execFileSync('umount', ['-l', join(rootfs, 'usr')]);
    rmSync(rootfs, { recursive: true, force: true });
  });

  it('runs a configured rootfs image, lists it, and never falls back for unknown names', async () => {
    const t = makeBackend({ images: { 'test/custom': { rootfs } } });
    try {
      expect(t.backend.capabilities().images).toEqual(['paddock/base', 'test/custom']);
      await launchRunning(t, spec('custom', { image: 'test/custom' }));
      const r = await t.backend.exec('custom', { argv: ['cat', '/etc/os-release'] });
      expect(r.stdout.toString()).toBe('NAME=paddock-test-image\n');
      const base = await t.backend.exec('custom', { argv: ['sh', '-c', 'test -e /etc/passwd && echo has-passwd || echo no-passwd'] });
      expect(base.stdout.toString()).toBe('no-passwd\n');
      await t.backend.launch(spec('typo', { image: 'test/custom2' }));
      const failed = await waitForState(t, 'typo', ['STATE_FAILED', 'STATE_RUNNING']);
      expect(failed).toMatchObject({ state: 'STATE_FAILED', reason: 'IMAGE_NOT_FOUND' });
      expect(failed.message).toContain('test/custom2');
    } finally {
      const left = await destroyBackend(t);
      expect(left).toEqual({ leftoverProcesses: [], leftoverCgroups: [] });
    }
  });
});

import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseImageAliases } from '../../src/backend/local/options';
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

  it('runs an aliased image reference as its local image (PADDOCK_IMAGE_ALIASES) and refuses an alias to an unknown image', async () => {
    expect(parseImageAliases('python:3.11=paddock/base, ghcr.io/x/y:1=test/custom')).toEqual({ 'python:3.11': 'paddock/base', 'ghcr.io/x/y:1': 'test/custom' });
    expect(parseImageAliases('')).toEqual({});
    expect(() => parseImageAliases('python:3.11')).toThrow('PADDOCK_IMAGE_ALIASES: "python:3.11" must be reference=local-image (e.g. python:3.11=paddock/base)');
    expect(() => makeBackend({ imageAliases: { 'python:3.11': 'no/such' } })).toThrow('image alias python:3.11=no/such: no/such is not a local image (known: paddock/base)');
    const t = makeBackend({ images: { 'test/custom': { rootfs } }, imageAliases: { 'python:3.11': 'paddock/base', 'custom:latest': 'test/custom' } });
    try {
      expect(t.backend.capabilities().images).toEqual(['paddock/base', 'test/custom', 'python:3.11', 'custom:latest']);
      await launchRunning(t, spec('aliased-base', { image: 'python:3.11' }));
      const base = await t.backend.exec('aliased-base', { argv: ['sh', '-c', 'test -e /etc/passwd && echo has-passwd'] });
      expect(base.stdout.toString()).toBe('has-passwd\n');
      await launchRunning(t, spec('aliased-rootfs', { image: 'custom:latest' }));
      const custom = await t.backend.exec('aliased-rootfs', { argv: ['cat', '/etc/os-release'] });
      expect(custom.stdout.toString()).toBe('NAME=paddock-test-image\n');
    } finally {
      const left = await destroyBackend(t);
      expect(left).toEqual({ leftoverProcesses: [], leftoverCgroups: [] });
    }
  });
});

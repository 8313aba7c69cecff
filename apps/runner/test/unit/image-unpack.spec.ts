import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readRegistryAuthFile } from '../../src/backend/local/images/auth-file';
import { resolveImageUser } from '../../src/backend/local/images/image-config';
import { formatReference, parseImageReference } from '../../src/backend/local/images/reference';
import { freshRoot, normalizeOwnership, unpackLayer } from '../../src/backend/local/images/unpack-layer';

/** A layer made by GNU tar from a directory `build` fills in (so it may hold what node-tar would refuse to write). */
function layer(dir: string, name: string, build: (stage: string) => void): string {
  const stage = join(dir, `stage-${name}`);
  mkdirSync(stage);
  build(stage);
  const file = join(dir, `${name}.tar.gz`);
  execFileSync('tar', ['-czf', file, '--numeric-owner', '-C', stage, '.']);
  return file;
}

describe('image layers: unpack', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'paddock-unpack-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('applies whiteouts and opaque directories to lower layers only', async () => {
    const root = join(dir, 'root');
    freshRoot(root);
    await unpackLayer(
      layer(dir, 'l1', (s) => {
        mkdirSync(join(s, 'keep'));
        writeFileSync(join(s, 'keep', 'a'), 'a');
        writeFileSync(join(s, 'gone'), 'x');
        mkdirSync(join(s, 'opq'));
        writeFileSync(join(s, 'opq', 'lower'), 'lower');
      }),
      root,
    );
    await unpackLayer(
      layer(dir, 'l2', (s) => {
        writeFileSync(join(s, '.wh.gone'), '');
        mkdirSync(join(s, 'opq'));
        // Same layer as the marker: stays, whatever the order in the archive.
        writeFileSync(join(s, 'opq', 'upper'), 'upper');
        writeFileSync(join(s, 'opq', '.wh..wh..opq'), '');
      }),
      root,
    );
    expect(existsSync(join(root, 'gone'))).toBe(false);
    expect(readdirSync(join(root, 'opq'))).toEqual(['upper']);
    expect(readFileSync(join(root, 'keep', 'a'), 'utf8')).toBe('a');
    expect(readdirSync(root).filter((n) => n.startsWith('.wh.'))).toEqual([]);
  });

  it('never deletes or writes through a link a lower layer planted, skips devices, drops setuid', async () => {
    const outside = join(dir, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'victim'), 'must survive');
    const root = join(dir, 'root');
    freshRoot(root);
    await unpackLayer(
      layer(dir, 'l1', (s) => {
        symlinkSync(outside, join(s, 'evil'));
        execFileSync('mknod', [join(s, 'mem'), 'c', '1', '1']);
        writeFileSync(join(s, 'suid'), '#!/bin/sh\n', { mode: 0o4755 });
      }),
      root,
    );
    await unpackLayer(
      layer(dir, 'l2', (s) => {
        mkdirSync(join(s, 'evil'));
        writeFileSync(join(s, 'evil', '.wh.victim'), '');
        writeFileSync(join(s, 'evil', 'planted'), 'x');
      }),
      root,
    );
    expect(readFileSync(join(outside, 'victim'), 'utf8')).toBe('must survive');
    expect(existsSync(join(outside, 'planted'))).toBe(false);
    expect(existsSync(join(root, 'mem'))).toBe(false);
    expect(lstatSync(join(root, 'suid')).mode & 0o7777).toBe(0o755);
  });

  it('gives the image user its own files and host root everything else', async () => {
    const root = join(dir, 'root');
    freshRoot(root);
    await unpackLayer(
      layer(dir, 'l1', (s) => {
        mkdirSync(join(s, 'etc'));
        writeFileSync(join(s, 'etc', 'passwd'), 'root:x:0:0::/:/bin/sh\napp:x:1000:1001::/home/app:/bin/sh\nsvc:x:999:999::/:/bin/sh\n');
        writeFileSync(join(s, 'etc', 'group'), 'root:x:0:\napp:x:1001:\nstaff:x:50:\n');
        writeFileSync(join(s, 'mine'), 'x');
        execFileSync('chown', ['1000:1001', join(s, 'mine')]);
        writeFileSync(join(s, 'svc'), 'x');
        execFileSync('chown', ['999:999', join(s, 'svc')]);
      }),
      root,
    );
    const user = resolveImageUser(root, 'app');
    expect(user).toEqual({ uid: 1000, gid: 1001 });
    expect(resolveImageUser(root, '1000:staff')).toEqual({ uid: 1000, gid: 50 });
    expect(resolveImageUser(root, 'root')).toBeUndefined();
    expect(resolveImageUser(root, '')).toBeUndefined();
    expect(() => resolveImageUser(root, 'nobody-here')).toThrow('the image\'s user "nobody-here" is not in its /etc/passwd');
    normalizeOwnership(root, user?.uid, 65534, 65534);
    expect([lstatSync(join(root, 'mine')).uid, lstatSync(join(root, 'mine')).gid]).toEqual([65534, 65534]);
    expect([lstatSync(join(root, 'svc')).uid, lstatSync(join(root, 'svc')).gid]).toEqual([0, 0]);
  });
});

describe('image references and registry auth files', () => {
  it('parses references the way Docker does', () => {
    expect(parseImageReference('python:3.12-slim')).toEqual({ registry: 'docker.io', repository: 'library/python', tag: '3.12-slim' });
    expect(parseImageReference('127.0.0.1:5000/a/b')).toEqual({ registry: '127.0.0.1:5000', repository: 'a/b', tag: 'latest' });
    const d = `sha256:${'a'.repeat(64)}`;
    expect(parseImageReference(`ghcr.io/acme/app:1@${d}`)).toEqual({ registry: 'ghcr.io', repository: 'acme/app', tag: '1', digest: d });
    expect(formatReference(parseImageReference(`localhost/x@${d}`) ?? { registry: '', repository: '' })).toBe(`localhost/x@${d}`);
    for (const bad of ['UPPER/case', 'x@sha256:short', 'a//b', '']) expect(parseImageReference(bad)).toBeUndefined();
  });

  it('reads the auths format skopeo and Docker write', () => {
    const d = mkdtempSync(join(tmpdir(), 'paddock-auths-'));
    try {
      const f = join(d, 'auth.json');
      writeFileSync(f, JSON.stringify({ auths: { 'https://index.docker.io/v1/': { auth: Buffer.from('u:p:w').toString('base64') }, 'reg:5000': { username: 'a', password: 'b' } } }));
      expect(readRegistryAuthFile(f)).toEqual({ 'docker.io': { username: 'u', password: 'p:w' }, 'reg:5000': { username: 'a', password: 'b' } });
      writeFileSync(f, '{"auths": {"x": {"auth": "bm9jb2xvbg=="}}}');
      expect(() => readRegistryAuthFile(f)).toThrow('the auth of x is not base64 of user:password');
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});

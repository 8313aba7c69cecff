import { execFile } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { resolveSandboxSpec, validatePolicy } from '@paddock/policy';
import { waitFor } from '@paddock/testing';
import { localRegistryOptions } from '../../src/backend/create-backend';
import type { LocalBackendOptions } from '../../src/backend/local';
import type { LaunchSpec } from '../../src/backend/sandbox-backend';
import { parseRunnerEnv } from '../../src/config/env';
import { buildImage, busyboxLayer, pushImage, startRegistry, type BuiltImage, type LayerFile, type TestImageSpec, type TestRegistry } from '@paddock/testing';
import { cgroupValue, destroyBackend, launchRunning, makeBackend, spec, waitForState, type TestBackend } from './helpers';

const run = promisify(execFile);

const RUN_SH = [
  'echo "uid=$(id -u) gid=$(id -g) pwd=$(pwd) args=$* greeting=$GREETING override=$OVERRIDE"',
  'cat /home/app/private.txt',
  'exec sleep infinity',
].join('\n');

/** Three layers over busybox-static: a whiteout and an opaque directory in the second, the entrypoint in the third. */
function testImage(marker: string): TestImageSpec {
  const base: LayerFile[] = [
    ...busyboxLayer(),
    { path: 'etc', dir: true },
    { path: 'etc/passwd', content: 'root:x:0:0::/root:/bin/sh\napp:x:1000:1000::/home/app:/bin/sh\n' },
    { path: 'etc/group', content: 'root:x:0:\napp:x:1000:\n' },
    { path: 'secret.txt', content: 'deleted in the next layer\n' },
    { path: 'data', dir: true },
    { path: 'data/old.txt', content: 'hidden by the opaque directory\n' },
    { path: 'marker', content: marker },
  ];
  const upper: LayerFile[] = [
    { path: '.wh.secret.txt' },
    { path: 'data', dir: true },
    { path: 'data/.wh..wh..opq' },
    { path: 'data/new.txt', content: 'new\n' },
    { path: 'home', dir: true },
    { path: 'home/app', dir: true, mode: 0o700, uid: 1000, gid: 1000 },
    { path: 'home/app/private.txt', content: 'only app reads this\n', mode: 0o600, uid: 1000, gid: 1000 },
  ];
  const app: LayerFile[] = [
    { path: 'app', dir: true },
    { path: 'app/run.sh', content: RUN_SH, mode: 0o755 },
  ];
  return {
    layers: [base, upper, app],
    entrypoint: ['/bin/sh', '/app/run.sh'],
    cmd: ['hello'],
    env: ['PATH=/bin', 'GREETING=from-image', 'OVERRIDE=image'],
    workingDir: '/srv/work',
    user: 'app',
  };
}

async function logText(t: TestBackend, id: string): Promise<string> {
  let out = '';
  for await (const c of t.backend.logs(id, {})) out += c.data.toString();
  return out;
}

/** Regular files under `dir` that contain any of `needles`. */
function filesContaining(dir: string, needles: string[]): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const path = join(dir, name);
    const st = lstatSync(path);
    if (!st.isFile()) continue;
    const text = readFileSync(path, 'latin1');
    if (needles.some((n) => text.includes(n))) out.push(path);
  }
  return out;
}

describe('local backend: images pulled from a registry', () => {
  let pub: TestRegistry;
  let priv: TestRegistry;
  let image: BuiltImage;
  let other: BuiltImage;
  let corrupt: BuiltImage;
  let oversize: BuiltImage;
  let digest: string;
  const backends: TestBackend[] = [];

  function registryBackend(extra: Partial<LocalBackendOptions['registry']> = {}, more: Partial<LocalBackendOptions> = {}): TestBackend {
    const t = makeBackend({ registry: { insecure: [pub.host, priv.host], ...extra }, ...more });
    backends.push(t);
    return t;
  }

  beforeAll(async () => {
    [pub, priv] = await Promise.all([startRegistry(), startRegistry({ kind: 'htpasswd', users: { alice: 's3cret' } })]);
    image = await buildImage(testImage(`main-${process.pid}`));
    other = await buildImage(testImage(`other-${process.pid}`));
    corrupt = await buildImage(testImage(`corrupt-${process.pid}-${Date.now()}`));
    oversize = await buildImage(testImage(`oversize-${process.pid}-${Date.now()}`));
    digest = await pushImage(image, pub, 'paddock/test:v1');
    await pushImage(other, pub, 'paddock/other:v1');
    await pushImage(corrupt, pub, 'paddock/corrupt:v1');
    await pushImage(oversize, pub, 'paddock/oversize:v1');
    await pushImage(image, priv, 'team/private:v1', 'alice:s3cret');
  }, 120_000);

  afterEach(async () => {
    for (const t of backends.splice(0)) {
      const left = await destroyBackend(t);
      expect(left).toEqual({ leftoverProcesses: [], leftoverCgroups: [] });
    }
  });

  afterAll(async () => {
    await Promise.all([pub?.stop(), priv?.stop()]);
    for (const img of [image, other, corrupt, oversize]) if (img) rmSync(img.layoutDir, { recursive: true, force: true });
  });

  it('runs an image by tag with its entrypoint, env, workdir and non-root user; whiteouts applied', async () => {
    const t = registryBackend();
    expect(t.backend.capabilities().images).toEqual([]);
    const ref = `${pub.host}/paddock/test:v1`;
    await t.backend.launch(spec('by-tag', { image: ref, env: { OVERRIDE: 'spec' } }));
    const running = await waitForState(t, 'by-tag', ['STATE_RUNNING', 'STATE_FAILED'], 60_000);
    expect(running).toMatchObject({ state: 'STATE_RUNNING' });
    const creating = t.events.filter((e) => e.sandboxId === 'by-tag' && e.state === 'STATE_CREATING').map((e) => e.message ?? '');
    expect(creating.some((m) => m.startsWith(`pulling image ${ref} (3 layers`))).toBe(true);
    expect(creating.some((m) => m.startsWith(`unpacking image ${ref}`))).toBe(true);

    const out = await waitFor(async () => ((await logText(t, 'by-tag')).includes('only app reads this') ? logText(t, 'by-tag') : undefined), { timeoutMs: 10_000, what: 'the entrypoint output' });
    expect(out).toBe('uid=1000 gid=1000 pwd=/srv/work args=hello greeting=from-image override=spec\nonly app reads this\n');

    const exec = async (cmd: string): Promise<string> => (await t.backend.exec('by-tag', { argv: ['sh', '-c', cmd] })).stdout.toString();
    // Exec runs as the image's user too, with the image's env under the spec's, in its workdir.
    expect(await exec('echo $(id -u):$(id -g) $(pwd) $GREETING $OVERRIDE')).toBe('1000:1000 /srv/work from-image spec\n');
    // uid 1000 inside is the runner's unprivileged host uid outside, never root: every process of
    // the sandbox, seen from the host.
    const pids = cgroupValue(t, 'by-tag', 'pids', 'cgroup.procs').split('\n').filter(Boolean);
    expect(pids.length).toBeGreaterThan(0);
    const hostUids = new Set(pids.map((pid) => /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]));
    expect([...hostUids]).toEqual(['65534']);
    expect(await exec('test -e /secret.txt && echo present || echo absent')).toBe('absent\n');
    expect(await exec('ls /data')).toBe('new.txt\n');
    expect(await exec('cat /home/app/private.txt')).toBe('only app reads this\n');
    // The image is read-only; the sandbox writes to its own /tmp and /workspace.
    expect(await exec('echo x > /app/new 2>/dev/null && echo wrote || echo refused')).toBe('refused\n');
    expect(await exec('echo x > /tmp/f && cat /tmp/f')).toBe('x\n');
    expect(t.backend.imageCache()?.list().map((i) => i.digest)).toEqual([digest]);
  }, 90_000);

  it('runs an image by digest (from the cache, no second pull) and lets the spec command override the entrypoint', async () => {
    const t = registryBackend();
    await launchRunning(t, spec('first', { image: `${pub.host}/paddock/test:v1` }));
    await t.backend.launch(spec('by-digest', { image: `${pub.host}/paddock/test@${digest}`, command: ['sh', '-c', 'echo by-digest as $(id -u) in $(pwd)'] }));
    const end = await waitForState(t, 'by-digest', ['STATE_COMPLETED', 'STATE_FAILED'], 30_000);
    expect(end).toMatchObject({ state: 'STATE_COMPLETED', exitCode: 0 });
    expect(await logText(t, 'by-digest')).toBe('by-digest as 1000 in /srv/work\n');
    expect(t.backend.imageCache()?.pulls).toBe(1);
  }, 90_000);

  it('refuses a layer that does not match its digest, and a digest the registry does not have', async () => {
    // The registry serves what its storage holds: a layer changed there no longer hashes to its digest.
    const layer = corrupt.layers[0] as { digest: string; size: number };
    const hexd = layer.digest.slice(7);
    const data = join(pub.storageDir, 'docker/registry/v2/blobs/sha256', hexd.slice(0, 2), hexd, 'data');
    const bytes = readFileSync(data);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 1) ^ 0xff, bytes.length - 1);
    writeFileSync(data, bytes);
    const t = registryBackend();
    await t.backend.launch(spec('tampered', { image: `${pub.host}/paddock/corrupt:v1` }));
    const failed = await waitForState(t, 'tampered', ['STATE_FAILED', 'STATE_RUNNING'], 60_000);
    expect(failed).toMatchObject({ state: 'STATE_FAILED', reason: 'IMAGE_DIGEST_MISMATCH' });
    expect(failed.message).toContain(`not ${layer.digest}`);
    expect(t.backend.imageCache()?.list()).toEqual([]);

    // A blob longer than its descriptor is cut off where it passes its size, never stored.
    const big = oversize.layers[0] as { digest: string; size: number };
    const bigHex = big.digest.slice(7);
    const bigData = join(pub.storageDir, 'docker/registry/v2/blobs/sha256', bigHex.slice(0, 2), bigHex, 'data');
    writeFileSync(bigData, Buffer.concat([readFileSync(bigData), Buffer.alloc(1 << 20)]));
    await t.backend.launch(spec('too-long', { image: `${pub.host}/paddock/oversize:v1` }));
    const tooLong = await waitForState(t, 'too-long', ['STATE_FAILED', 'STATE_RUNNING'], 60_000);
    expect(tooLong).toMatchObject({ state: 'STATE_FAILED', reason: 'IMAGE_DIGEST_MISMATCH' });
    expect(tooLong.message).toContain(`is longer than its ${big.size} bytes`);
    expect(readdirSync(join(t.stateDir, 'images', 'blobs')).filter((n) => n.startsWith(bigHex))).toEqual([]);

    const missing = `sha256:${'0'.repeat(64)}`;
    await t.backend.launch(spec('no-such-digest', { image: `${pub.host}/paddock/test@${missing}` }));
    const notFound = await waitForState(t, 'no-such-digest', ['STATE_FAILED', 'STATE_RUNNING'], 30_000);
    expect(notFound).toMatchObject({ state: 'STATE_FAILED', reason: 'IMAGE_NOT_FOUND' });
    expect(notFound.message).toContain(missing);
  }, 90_000);

  it('needs credentials for a private repository and works with them', async () => {
    const ref = `${priv.host}/team/private:v1`;
    const anon = registryBackend();
    await anon.backend.launch(spec('anon', { image: ref }));
    const refused = await waitForState(anon, 'anon', ['STATE_FAILED', 'STATE_RUNNING'], 30_000);
    expect(refused).toMatchObject({ state: 'STATE_FAILED', reason: 'IMAGE_PULL_UNAUTHORIZED' });
    expect(refused.message).toContain(`registry ${priv.host} needs credentials for team/private`);
    const wrong = registryBackend({ credentials: { [priv.host]: { username: 'alice', password: 'wrong' } } });
    await wrong.backend.launch(spec('wrong', { image: ref }));
    expect(await waitForState(wrong, 'wrong', ['STATE_FAILED', 'STATE_RUNNING'], 30_000)).toMatchObject({ state: 'STATE_FAILED', reason: 'IMAGE_PULL_UNAUTHORIZED' });
    const alice = registryBackend({ credentials: { [priv.host]: { username: 'alice', password: 's3cret' } } });
    await launchRunning(alice, spec('alice', { image: ref }));
    expect((await alice.backend.exec('alice', { argv: ['id', '-u'] })).stdout.toString()).toBe('1000\n');
  }, 90_000);

  it('pulls a private repository with the credentials the create delivers, over the runner\'s own, and keeps them nowhere', async () => {
    const ref = `${priv.host}/team/private:v1`;
    const delivered = (password: string): Partial<LaunchSpec> => ({
      imagePullRegistries: [priv.host],
      imagePullDockerConfig: JSON.stringify({ auths: { [priv.host]: { auth: Buffer.from(`alice:${password}`).toString('base64') } } }),
    });
    // The runner's own credential for the registry is wrong: the delivered one wins for its registry.
    const t = registryBackend({ credentials: { [priv.host]: { username: 'alice', password: 'stale' } } });
    await t.backend.launch(spec('bad-login', { image: ref, ...delivered('wrong') }));
    const wrong = await waitForState(t, 'bad-login', ['STATE_FAILED', 'STATE_RUNNING'], 30_000);
    expect(wrong).toMatchObject({ state: 'STATE_FAILED', reason: 'IMAGE_PULL_UNAUTHORIZED' });
    expect(wrong.message).toContain(`registry ${priv.host} refused`);
    await launchRunning(t, spec('good-login', { image: ref, ...delivered('s3cret') }));
    expect((await t.backend.exec('good-login', { argv: ['cat', '/marker'] })).stdout.toString()).toBe(`main-${process.pid}`);
    expect(t.backend.imageCache()?.list().map((i) => i.digest)).toEqual([digest]);

    // The cached image is not handed out by digest to a create without working credentials: the
    // registry is asked again, with that create's own.
    const byDigest = `${priv.host}/team/private@${digest}`;
    await t.backend.launch(spec('digest-no-login', { image: byDigest }));
    expect(await waitForState(t, 'digest-no-login', ['STATE_FAILED', 'STATE_RUNNING'], 30_000)).toMatchObject({ state: 'STATE_FAILED', reason: 'IMAGE_PULL_UNAUTHORIZED' });
    await t.backend.launch(spec('digest-wrong-login', { image: byDigest, ...delivered('wrong') }));
    expect(await waitForState(t, 'digest-wrong-login', ['STATE_FAILED', 'STATE_RUNNING'], 30_000)).toMatchObject({ state: 'STATE_FAILED', reason: 'IMAGE_PULL_UNAUTHORIZED' });
    await launchRunning(t, spec('digest-login', { image: byDigest, ...delivered('s3cret') }));
    expect(t.backend.imageCache()?.pulls).toBe(1);

    // Credentials asked for but not delivered end the sandbox rather than pulling without them.
    await t.backend.launch(spec('undelivered', { image: ref, imagePullRegistries: [priv.host] }));
    const undelivered = await waitForState(t, 'undelivered', ['STATE_FAILED', 'STATE_RUNNING'], 30_000);
    expect(undelivered).toMatchObject({ state: 'STATE_FAILED', reason: 'IMAGE_PULL_UNAUTHORIZED' });
    expect(undelivered.message).toContain('were not delivered');

    // Neither the password nor its base64 is in any file the runner wrote, nor in any event.
    const secrets = ['s3cret', Buffer.from('alice:s3cret').toString('base64'), Buffer.from('alice:wrong').toString('base64')];
    expect(filesContaining(t.stateDir, secrets)).toEqual([]);
    expect(t.events.filter((e) => secrets.some((x) => JSON.stringify(e).includes(x)))).toEqual([]);
  }, 120_000);

  it('answers a Bearer challenge with a token from the registry\'s token service (anonymous refused)', async () => {
    const tok = await startRegistry({ kind: 'token', users: { bob: 'hunter2' } });
    try {
      await pushImage(image, tok, 'team/tok:v1', 'bob:hunter2');
      const ref = `${tok.host}/team/tok:v1`;
      const anon = registryBackend({ insecure: [tok.host] });
      await anon.backend.launch(spec('tok-anon', { image: ref }));
      const refused = await waitForState(anon, 'tok-anon', ['STATE_FAILED', 'STATE_RUNNING'], 30_000);
      expect(refused).toMatchObject({ state: 'STATE_FAILED', reason: 'IMAGE_PULL_UNAUTHORIZED' });
      expect(refused.message).toContain(`the token service of ${tok.host} refused anonymous access`);
      const bob = registryBackend({ insecure: [tok.host], credentials: { [tok.host]: { username: 'bob', password: 'hunter2' } } });
      await launchRunning(bob, spec('tok-bob', { image: ref }));
      expect((await bob.backend.exec('tok-bob', { argv: ['cat', '/marker'] })).stdout.toString()).toBe(`main-${process.pid}`);
      expect(tok.tokens?.requests).toContainEqual({ user: 'bob', scope: 'repository:team/tok:pull' });
    } finally {
      await tok.stop();
    }
  }, 90_000);

  it('takes plain-HTTP registries and credentials from the runner configuration (an auth file skopeo login writes)', async () => {
    const authFile = join(mkdtempSync(join(tmpdir(), 'paddock-auth-')), 'auth.json');
    try {
      await run('skopeo', ['login', '--tls-verify=false', '--authfile', authFile, '-u', 'alice', '-p', 's3cret', priv.host]);
      const env = parseRunnerEnv({ PADDOCK_REGISTRY_INSECURE: `${priv.host}, ${pub.host}`, PADDOCK_REGISTRY_AUTH_FILE: authFile });
      if (!env.ok) throw new Error(env.message);
      const bad = parseRunnerEnv({ PADDOCK_REGISTRY_INSECURE: 'http://x' });
      expect(bad.ok ? [] : bad.errors.join(' ')).toContain('PADDOCK_REGISTRY_INSECURE');
      const options = localRegistryOptions(env.env);
      expect(options.registry?.insecure).toEqual([priv.host, pub.host]);
      const t = makeBackend(options);
      backends.push(t);
      await launchRunning(t, spec('configured', { image: `${priv.host}/team/private:v1` }));
      expect((await t.backend.exec('configured', { argv: ['cat', '/marker'] })).stdout.toString()).toBe(`main-${process.pid}`);
      // Without the insecure entry the registry is HTTPS only, which it does not speak.
      const strict = makeBackend({ registry: {} });
      backends.push(strict);
      await strict.backend.launch(spec('https-only', { image: `${pub.host}/paddock/test:v1` }));
      expect(await waitForState(strict, 'https-only', ['STATE_FAILED', 'STATE_RUNNING'], 30_000)).toMatchObject({ state: 'STATE_FAILED', reason: 'IMAGE_PULL_FAILED' });
    } finally {
      rmSync(join(authFile, '..'), { recursive: true, force: true });
    }
  }, 90_000);

  it('pulls once for two concurrent creates of the same image', async () => {
    const t = registryBackend();
    const before = pub.log().length;
    const ref = `${pub.host}/paddock/other:v1`;
    await Promise.all([t.backend.launch(spec('one', { image: ref })), t.backend.launch(spec('two', { image: ref }))]);
    for (const id of ['one', 'two']) expect(await waitForState(t, id, ['STATE_RUNNING', 'STATE_FAILED'], 60_000)).toMatchObject({ state: 'STATE_RUNNING' });
    expect(t.backend.imageCache()?.pulls).toBe(1);
    // The registry's own access log: each layer was fetched once.
    const log = pub.log().slice(before);
    for (const l of other.layers) expect(log.split(`GET /v2/paddock/other/blobs/${l.digest}`).length - 1).toBe(1);
  }, 90_000);

  it('ends a sandbox stopped during its pull at once; the pull still fills the cache', async () => {
    const t = registryBackend();
    await t.backend.launch(spec('stopped-pulling', { image: `${pub.host}/paddock/other:v1` }));
    await t.backend.stop('stopped-pulling', 0, 'STOPPED_BY_USER');
    const end = await waitForState(t, 'stopped-pulling', ['STATE_FAILED', 'STATE_COMPLETED', 'STATE_RUNNING']);
    expect(end).toMatchObject({ reason: 'STOPPED_BY_USER' });
    expect(t.events.some((e) => e.sandboxId === 'stopped-pulling' && e.state === 'STATE_RUNNING')).toBe(false);
    await waitFor(() => (t.backend.imageCache()?.list().length === 1 ? true : undefined), { timeoutMs: 30_000, what: 'the pull to finish' });
    expect(existsSync(join(t.stateDir, 'sandboxes', 'stopped-pulling'))).toBe(false);
  }, 90_000);

  it('resumes a blob a previous runner left partial', async () => {
    const t = registryBackend();
    const cacheDir = join(t.stateDir, 'images');
    const layer = other.layers[0] as { digest: string; size: number };
    const whole = readFileSync(join(other.layoutDir, 'blobs/sha256', layer.digest.slice(7)));
    // What an interrupted download leaves: the first half of the blob.
    t.backend.imageCache();
    writeFileSync(join(cacheDir, 'blobs', `${layer.digest.slice(7)}.partial`), whole.subarray(0, Math.floor(whole.length / 2)));
    const before = pub.log().length;
    await launchRunning(t, spec('resumed', { image: `${pub.host}/paddock/other:v1` }));
    const line = pub.log().slice(before).split('\n').find((l) => l.includes(`GET /v2/paddock/other/blobs/${layer.digest}`)) ?? '';
    expect(line).toMatch(new RegExp(`" 206 ${whole.length - Math.floor(whole.length / 2)} `));
    expect((await t.backend.exec('resumed', { argv: ['cat', '/marker'] })).stdout.toString()).toBe(`other-${process.pid}`);
  }, 90_000);

  it('collects unused images past the cache bound, never one a sandbox uses', async () => {
    const t = registryBackend({ cacheBytes: 1 });
    await launchRunning(t, spec('a', { image: `${pub.host}/paddock/test:v1` }));
    await launchRunning(t, spec('b', { image: `${pub.host}/paddock/other:v1` }));
    // Both in use: the bound is exceeded rather than a running sandbox's image removed.
    expect(t.backend.imageCache()?.list()).toHaveLength(2);
    await t.backend.reap('a', 'STOPPED_BY_USER');
    expect(t.backend.imageCache()?.collect()).toEqual([digest]);
    expect(t.backend.imageCache()?.list().map((i) => i.reference)).toEqual([`${pub.host}/paddock/other:v1`]);
  }, 90_000);

  it('is admitted by the policy for an allowed registry and refused naming the rule otherwise', () => {
    const t = registryBackend();
    const policy = validatePolicy({ constraints: { image: { allowedRegistries: [pub.host] } } });
    if (!policy.ok) throw new Error('policy');
    const caps = t.backend.capabilities();
    const allowed = resolveSandboxSpec({ policy: policy.policy, spec: { containers: [{ image: `${pub.host}/paddock/test:v1` }] }, capabilities: caps });
    expect(allowed.ok).toBe(true);
    const refused = resolveSandboxSpec({ policy: policy.policy, spec: { containers: [{ image: `${priv.host}/team/private:v1` }] }, capabilities: caps });
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.violations.map((v) => [v.field, v.rule])).toEqual([['containers[0].image', 'allowed_registries']]);
  });
  it('admits a tag of a digest-pinned repository only while the tag resolves to the pinned digest', async () => {
    const pinnedRepo = `${pub.host}/paddock/pinned`;
    await pushImage(image, pub, 'paddock/pinned:v1');
    const policy = validatePolicy({ constraints: { image: { allowedImages: [`${pinnedRepo}@${digest}`] } } });
    if (!policy.ok) throw new Error('policy');
    const t = registryBackend();
    const caps = t.backend.capabilities();
    const admitted = resolveSandboxSpec({ policy: policy.policy, spec: { containers: [{ image: `${pinnedRepo}:v1` }] }, capabilities: caps });
    if (!admitted.ok) throw new Error(JSON.stringify(admitted.violations));
    // Admitted on condition: the resolved container carries the pin for the runner to check.
    const pins = admitted.resolved.containers[0]?.imageDigests;
    expect(pins).toEqual([digest]);
    // A repository the policy neither lists nor pins is still refused at admission.
    const unpinned = resolveSandboxSpec({ policy: policy.policy, spec: { containers: [{ image: `${pub.host}/paddock/other:v1` }] }, capabilities: caps });
    expect(unpinned.ok ? [] : unpinned.violations.map((v) => v.rule)).toEqual(['allowed_images']);

    await launchRunning(t, spec('pinned-ok', { image: `${pinnedRepo}:v1`, imageDigests: pins }));
    expect(t.backend.imageCache()?.list().map((i) => i.digest)).toEqual([digest]);

    // The tag moves to another image: the same admitted spec is refused once the tag is resolved,
    // before anything of the new image is downloaded.
    const otherDigest = await pushImage(other, pub, 'paddock/pinned:v1');
    expect(otherDigest).not.toBe(digest);
    await t.backend.launch(spec('pinned-moved', { image: `${pinnedRepo}:v1`, imageDigests: pins }));
    const refused = await waitForState(t, 'pinned-moved', ['STATE_FAILED', 'STATE_RUNNING'], 30_000);
    expect(refused).toMatchObject({ state: 'STATE_FAILED', reason: 'IMAGE_POLICY_REJECTED' });
    expect(refused.message).toContain('constraints.image.allowedImages');
    expect(refused.message).toContain(`resolved to ${otherDigest}`);
    expect(refused.message).toContain(`pinned: ${digest}`);
    expect(t.backend.imageCache()?.pulls).toBe(1);
    expect(readdirSync(join(t.stateDir, 'images', 'blobs'))).toEqual([]);
  }, 90_000);
});

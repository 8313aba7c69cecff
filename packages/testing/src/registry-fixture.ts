/**
 * A real registry for image tests and benches: Debian's `docker-registry` (the CNCF distribution
 * registry) on a private port with its own storage, and OCI images built here from
 * `busybox-static`, pushed with `skopeo` (an independent client).
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, createPrivateKey, randomBytes, sign, X509Certificate } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { chownSync, chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import * as tar from 'tar';

const run = promisify(execFile);

export interface TestRegistry {
  /** `127.0.0.1:<port>` */
  host: string;
  storageDir: string;
  /** Everything the registry logged so far (one access line per request). */
  log(): string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * A token service for the registry's `token` auth (the `WWW-Authenticate: Bearer` flow): it
 * checks basic credentials and issues RS256 JWTs, signed with a self-signed certificate the
 * registry trusts (`rootcertbundle`), granting pull of the repositories asked for.
 */
interface TokenService {
  realm: string;
  certFile: string;
  /** Token requests seen: anonymous ones and those with credentials. */
  requests: { user?: string; scope: string }[];
  close(): Promise<void>;
}

const b64url = (b: Buffer | string): string => Buffer.from(b).toString('base64url');

async function startTokenService(dir: string, users: Record<string, string>, service: string): Promise<TokenService> {
  const keyFile = join(dir, 'token.key');
  const certFile = join(dir, 'token.crt');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=paddock-test-token'], { stdio: 'ignore' });
  const key = createPrivateKey(readFileSync(keyFile));
  const der = new X509Certificate(readFileSync(certFile)).raw.toString('base64');
  const requests: TokenService['requests'] = [];
  const server = createHttpServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const scope = url.searchParams.get('scope') ?? '';
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const [user, pass] = basic ? Buffer.from(basic, 'base64').toString().split(':') : [];
    requests.push({ ...(user ? { user } : {}), scope });
    if (!user || users[user] !== pass) {
      res.writeHead(401).end();
      return;
    }
    const [, name, actions] = scope.split(':');
    const now = Math.floor(Date.now() / 1000);
    const header = b64url(JSON.stringify({ typ: 'JWT', alg: 'RS256', x5c: [der] }));
    const claims = b64url(JSON.stringify({ iss: 'paddock-test', sub: user, aud: service, exp: now + 300, nbf: now - 10, iat: now, jti: randomBytes(8).toString('hex'), access: name ? [{ type: 'repository', name, actions: (actions ?? 'pull').split(',') }] : [] }));
    const sig = sign('sha256', Buffer.from(`${header}.${claims}`), key).toString('base64url');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token: `${header}.${claims}.${sig}` }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return { realm: `http://127.0.0.1:${port}/token`, certFile, requests, close: () => new Promise((r) => server.close(() => r())) };
}

export interface RegistryAuth {
  /** `htpasswd`: basic auth; `token`: bearer tokens from a token service that checks these users. */
  kind: 'htpasswd' | 'token';
  users: Record<string, string>;
}

/** Starts a registry; with `auth`, every repository needs one of its users. */
export async function startRegistry(authOpt?: RegistryAuth): Promise<TestRegistry & { tokens?: TokenService }> {
  const dir = mkdtempSync(join(tmpdir(), 'paddock-registry-'));
  const port = await freePort();
  const storageDir = join(dir, 'storage');
  mkdirSync(storageDir);
  let auth = '';
  let tokens: TokenService | undefined;
  if (authOpt?.kind === 'token') {
    tokens = await startTokenService(dir, authOpt.users, 'paddock-test-registry');
    auth = `auth:\n  token:\n    realm: ${tokens.realm}\n    service: paddock-test-registry\n    issuer: paddock-test\n    rootcertbundle: ${tokens.certFile}\n`;
  }
  const users = authOpt?.kind === 'htpasswd' ? authOpt.users : undefined;
  if (users) {
    const file = join(dir, 'htpasswd');
    writeFileSync(file, '');
    for (const [u, p] of Object.entries(users)) execFileSync('htpasswd', ['-B', '-b', file, u, p], { stdio: 'ignore' });
    auth = `auth:\n  htpasswd:\n    realm: paddock-test\n    path: ${file}\n`;
  }
  const config = join(dir, 'config.yml');
  writeFileSync(
    config,
    `version: 0.1\nlog:\n  level: info\n  accesslog:\n    disabled: false\nstorage:\n  filesystem:\n    rootdirectory: ${storageDir}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:${port}\n${auth}`,
  );
  const child: ChildProcess = spawn('/usr/bin/docker-registry', ['serve', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout?.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  const host = `127.0.0.1:${port}`;
  const until = Date.now() + 15_000;
  for (;;) {
    try {
      const r = await fetch(`http://${host}/v2/`);
      if (r.status === 200 || r.status === 401) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > until || child.exitCode !== null) {
      child.kill('SIGKILL');
      await tokens?.close();
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`docker-registry did not start: ${log}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    host,
    storageDir,
    ...(tokens ? { tokens } : {}),
    log: () => log,
    stop: async () => {
      await tokens?.close();
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One file of a test layer. */
export interface LayerFile {
  path: string;
  content?: string | Buffer;
  /** A directory (no content) */
  dir?: boolean;
  symlink?: string;
  mode?: number;
  uid?: number;
  gid?: number;
}

export interface TestImageSpec {
  layers: LayerFile[][];
  entrypoint?: string[];
  cmd?: string[];
  env?: string[];
  workingDir?: string;
  user?: string;
}

export interface BuiltImage {
  /** An OCI image layout (skopeo's `oci:<dir>:<tag>`). */
  layoutDir: string;
  manifestDigest: string;
  /** Digest and size of each layer blob, in order. */
  layers: { digest: string; size: number }[];
}

const sha = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

async function layerTar(files: LayerFile[]): Promise<Buffer> {
  const stage = mkdtempSync(join(tmpdir(), 'paddock-layer-'));
  try {
    for (const f of files) {
      const at = join(stage, f.path);
      mkdirSync(join(at, '..'), { recursive: true });
      if (f.dir) mkdirSync(at, { recursive: true });
      else if (f.symlink) symlinkSync(f.symlink, at);
      else writeFileSync(at, f.content ?? '');
      if (!f.symlink) chmodSync(at, f.mode ?? (f.dir ? 0o755 : 0o644));
      if (f.uid !== undefined) chownSync(at, f.uid, f.gid ?? f.uid);
    }
    const chunks: Buffer[] = [];
    const stream = tar.c({ cwd: stage, portable: false, noMtime: true }, files.map((f) => f.path));
    for await (const c of stream) chunks.push(c);
    return Buffer.concat(chunks);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** Writes an OCI image layout with one manifest tagged `tag`. */
export async function buildImage(spec: TestImageSpec, tag = 'v1'): Promise<BuiltImage> {
  const layoutDir = mkdtempSync(join(tmpdir(), 'paddock-oci-'));
  const blobs = join(layoutDir, 'blobs', 'sha256');
  mkdirSync(blobs, { recursive: true });
  const put = (b: Buffer): { digest: string; size: number } => {
    const digest = sha(b);
    writeFileSync(join(blobs, digest.slice(7)), b);
    return { digest, size: b.length };
  };
  const layers: { digest: string; size: number }[] = [];
  const diffIds: string[] = [];
  for (const files of spec.layers) {
    const raw = await layerTar(files);
    diffIds.push(sha(raw));
    layers.push(put(gzipSync(raw, { level: 1 })));
  }
  const config = put(
    Buffer.from(
      JSON.stringify({
        architecture: 'amd64',
        os: 'linux',
        config: { Entrypoint: spec.entrypoint, Cmd: spec.cmd, Env: spec.env, WorkingDir: spec.workingDir, User: spec.user },
        rootfs: { type: 'layers', diff_ids: diffIds },
      }),
    ),
  );
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
      layers: layers.map((l) => ({ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', ...l })),
    }),
  );
  const m = put(manifest);
  writeFileSync(join(layoutDir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  writeFileSync(
    join(layoutDir, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [{ mediaType: 'application/vnd.oci.image.manifest.v1+json', ...m, annotations: { 'org.opencontainers.image.ref.name': tag } }],
    }),
  );
  return { layoutDir, manifestDigest: m.digest, layers };
}

/** `skopeo copy` of a layout into the registry; returns the pushed manifest's digest. */
export async function pushImage(img: BuiltImage, registry: TestRegistry, repoTag: string, creds?: string, tag = 'v1'): Promise<string> {
  const digestFile = join(img.layoutDir, 'pushed.digest');
  await run('skopeo', ['copy', '--quiet', '--dest-tls-verify=false', ...(creds ? ['--dest-creds', creds] : []), '--digestfile', digestFile, `oci:${img.layoutDir}:${tag}`, `docker://${registry.host}/${repoTag}`]);
  return readFileSync(digestFile, 'utf8').trim();
}

/** busybox-static and the applet links the tests use. */
export function busyboxLayer(): LayerFile[] {
  const applets = ['sh', 'cat', 'ls', 'id', 'env', 'pwd', 'sleep', 'echo', 'test', 'stat', 'true'];
  const bin = readFileSync('/bin/busybox');
  return [
    { path: 'bin', dir: true },
    { path: 'bin/busybox', content: bin, mode: 0o755 },
    ...applets.map((a) => ({ path: `bin/${a}`, symlink: 'busybox' })),
  ];
}

/** Incompressible filler, for images of a given size. */
export function filler(bytes: number): Buffer {
  return randomBytes(bytes);
}


import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { z } from 'zod';
import { ImagePullError } from './pull-error';
import { formatReference, registryApiHost, type ImageReference } from './reference';

export interface RegistryCredential {
  username: string;
  password: string;
}

export interface RegistryClientOptions {
  /** Registries (`host[:port]`) reached over plain HTTP; every other one is HTTPS only. */
  insecure: readonly string[];
  /** Credentials by registry host, for basic auth and for the bearer token exchange. */
  credentials: Readonly<Record<string, RegistryCredential>>;
  /** The platform picked from a multi-platform index. */
  platform: { os: string; architecture: string };
  /** A request (or a download) that makes no progress this long is abandoned. Default 30 s. */
  stallMs?: number;
}

export const MEDIA = {
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
} as const;
const ACCEPT = [MEDIA.ociIndex, MEDIA.dockerList, MEDIA.ociManifest, MEDIA.dockerManifest].join(', ');

const Descriptor = z.object({
  mediaType: z.string(),
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  size: z.number().int().nonnegative(),
  platform: z.object({ os: z.string(), architecture: z.string(), variant: z.string().optional() }).optional(),
});
export type Descriptor = z.infer<typeof Descriptor>;
const IndexSchema = z.object({ manifests: z.array(Descriptor) });
const ManifestSchema = z.object({ config: Descriptor, layers: z.array(Descriptor) });
export type ImageManifest = z.infer<typeof ManifestSchema>;

/** What a reference resolves to: one platform's manifest and the digest it is known by. */
export interface ResolvedManifest {
  /** Digest of the platform manifest (not of an index that pointed to it). */
  digest: string;
  /** Digest of what the reference names: the index when it leads to one, else `digest`. */
  referenceDigest: string;
  manifest: ImageManifest;
}

/** OCI's recommended bound on a manifest; a bigger one is refused rather than read into memory. */
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

async function readCapped(res: Response, max: number): Promise<Buffer | undefined> {
  if (!res.body) return Buffer.alloc(0);
  const parts: Buffer[] = [];
  let n = 0;
  for await (const chunk of Readable.fromWeb(res.body as WebReadableStream<Uint8Array>)) {
    n += (chunk as Buffer).length;
    if (n > max) {
      await res.body?.cancel().catch(() => undefined);
      return undefined;
    }
    parts.push(chunk as Buffer);
  }
  return Buffer.concat(parts);
}

function sha256(buf: Buffer): string {
  return `sha256:${createHash('sha256').update(buf).digest('hex')}`;
}

/**
 * A pull-only client of the OCI distribution API (Docker Registry v2): manifests by tag or
 * digest, blobs verified against their digests and resumed where a previous download stopped.
 * Authentication follows the registry's `WWW-Authenticate` challenge: `Basic` with the configured
 * credential, or `Bearer` with a token fetched from the realm it names (anonymous when no
 * credential is configured).
 */
export class RegistryClient {
  private readonly tokens = new Map<string, string>();
  /** Registries this client answered a challenge with a credential for. */
  private readonly presented = new Set<string>();

  constructor(private readonly o: RegistryClientOptions) {}

  /**
   * A client of its own for one pull, with `credentials` winning over this one's for the
   * registries they name. Its tokens die with it, so what one create's credentials obtained is
   * never presented for another create.
   */
  withCredentials(credentials: Readonly<Record<string, RegistryCredential>>): RegistryClient {
    return new RegistryClient({ ...this.o, credentials: { ...this.o.credentials, ...credentials } });
  }

  /** Whether this client has presented a credential to `registry` (the registry asked for one). */
  presentedCredentialsTo(registry: string): boolean {
    return this.presented.has(registry);
  }

  private base(ref: ImageReference): string {
    const scheme = this.o.insecure.includes(ref.registry) ? 'http' : 'https';
    return `${scheme}://${registryApiHost(ref.registry)}/v2/${ref.repository}`;
  }

  /** GET with the registry's auth challenge answered once; a second 401 is an authorization failure. */
  private async get(ref: ImageReference, url: string, headers: Record<string, string>, signal: AbortSignal): Promise<Response> {
    const key = `${ref.registry}/${ref.repository}`;
    const send = (): Promise<Response> => {
      const auth = this.tokens.get(key);
      return fetch(url, { headers: { ...headers, ...(auth ? { authorization: auth } : {}) }, redirect: 'follow', signal });
    };
    let res: Response;
    try {
      res = await send();
      if (res.status === 401) {
        await res.body?.cancel();
        this.tokens.set(key, await this.answerChallenge(ref, res.headers.get('www-authenticate') ?? '', signal));
        res = await send();
      }
    } catch (e) {
      if (e instanceof ImagePullError) throw e;
      throw new ImagePullError('IMAGE_PULL_FAILED', `registry ${ref.registry} cannot be reached: ${(e as Error).cause instanceof Error ? ((e as Error).cause as Error).message : (e as Error).message}`);
    }
    if (res.status === 401 || res.status === 403) {
      await res.body?.cancel();
      const who = this.o.credentials[ref.registry] ? `the credentials configured for ${ref.registry}` : 'anonymous access';
      throw new ImagePullError('IMAGE_PULL_UNAUTHORIZED', `registry ${ref.registry} refused ${who} to ${ref.repository} (HTTP ${res.status})`);
    }
    return res;
  }

  private async answerChallenge(ref: ImageReference, challenge: string, signal: AbortSignal): Promise<string> {
    const cred = this.o.credentials[ref.registry];
    const basic = cred ? `Basic ${Buffer.from(`${cred.username}:${cred.password}`).toString('base64')}` : undefined;
    if (cred) this.presented.add(ref.registry);
    const scheme = challenge.split(' ', 1)[0]?.toLowerCase();
    if (scheme === 'basic') {
      if (!basic) throw new ImagePullError('IMAGE_PULL_UNAUTHORIZED', `registry ${ref.registry} needs credentials for ${ref.repository} and none are configured`);
      return basic;
    }
    if (scheme !== 'bearer') throw new ImagePullError('IMAGE_PULL_UNAUTHORIZED', `registry ${ref.registry} asks for an unsupported authentication (${challenge || 'no challenge'})`);
    const params = Object.fromEntries([...challenge.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1] as string, m[2] as string]));
    if (!params['realm']) throw new ImagePullError('IMAGE_PULL_UNAUTHORIZED', `registry ${ref.registry}'s bearer challenge names no realm`);
    const url = new URL(params['realm']);
    if (params['service']) url.searchParams.set('service', params['service']);
    url.searchParams.set('scope', params['scope'] ?? `repository:${ref.repository}:pull`);
    const res = await fetch(url, { headers: basic ? { authorization: basic } : {}, signal });
    if (!res.ok) {
      await res.body?.cancel();
      throw new ImagePullError('IMAGE_PULL_UNAUTHORIZED', `the token service of ${ref.registry} refused ${cred ? 'the configured credentials' : 'anonymous access'} (HTTP ${res.status})`);
    }
    const body = z.object({ token: z.string().optional(), access_token: z.string().optional() }).parse(await res.json());
    const token = body.token ?? body.access_token;
    if (!token) throw new ImagePullError('IMAGE_PULL_UNAUTHORIZED', `the token service of ${ref.registry} returned no token`);
    return `Bearer ${token}`;
  }

  private async manifestAt(ref: ImageReference, version: string): Promise<{ body: Buffer; mediaType: string; digest: string }> {
    const res = await this.get(ref, `${this.base(ref)}/manifests/${version}`, { accept: ACCEPT }, AbortSignal.timeout(this.o.stallMs ?? 30_000));
    if (res.status === 404) {
      await res.body?.cancel();
      throw new ImagePullError('IMAGE_NOT_FOUND', `image ${formatReference(ref)} was not found in registry ${ref.registry}`);
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new ImagePullError('IMAGE_PULL_FAILED', `registry ${ref.registry} answered HTTP ${res.status} for the manifest of ${formatReference(ref)}`);
    }
    const body = await readCapped(res, MAX_MANIFEST_BYTES);
    if (!body) throw new ImagePullError('IMAGE_PULL_FAILED', `the manifest of ${formatReference(ref)} is larger than ${MAX_MANIFEST_BYTES} bytes: refused`);
    const digest = sha256(body);
    // A manifest asked for by digest must hash to it; by tag, it must hash to what the registry says.
    const expected = version.startsWith('sha256:') ? version : res.headers.get('docker-content-digest');
    if (expected && expected !== digest) {
      throw new ImagePullError('IMAGE_DIGEST_MISMATCH', `the manifest of ${formatReference(ref)} hashes to ${digest}, not ${expected}`);
    }
    const mediaType = (res.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
    return { body, mediaType, digest };
  }

  /** The manifest of the reference for this runner's platform (an index is followed to it). */
  async resolve(ref: ImageReference): Promise<ResolvedManifest> {
    const first = await this.manifestAt(ref, ref.digest ?? (ref.tag as string));
    const parsed = JSON.parse(first.body.toString('utf8')) as { mediaType?: string; manifests?: unknown };
    const type = parsed.mediaType ?? first.mediaType;
    if (type === MEDIA.ociIndex || type === MEDIA.dockerList || parsed.manifests !== undefined) {
      const index = IndexSchema.parse(parsed);
      const { os, architecture } = this.o.platform;
      const pick = index.manifests.find((m) => m.platform?.os === os && m.platform.architecture === architecture);
      if (!pick) {
        const offered = index.manifests.map((m) => (m.platform ? `${m.platform.os}/${m.platform.architecture}` : 'unknown')).join(', ');
        throw new ImagePullError('IMAGE_NOT_FOUND', `image ${formatReference(ref)} has no ${os}/${architecture} variant (offered: ${offered || 'none'})`);
      }
      const second = await this.manifestAt(ref, pick.digest);
      return { digest: second.digest, referenceDigest: first.digest, manifest: parseManifest(ref, second.body) };
    }
    return { digest: first.digest, referenceDigest: first.digest, manifest: parseManifest(ref, first.body) };
  }

  /**
   * Downloads a blob to `dest`, verified against its digest and size. A `<dest>.partial` left by
   * an interrupted download (a runner restart) is continued with a range request; a registry
   * that ignores the range sends the whole blob again.
   */
  async fetchBlob(ref: ImageReference, blob: Descriptor, dest: string, onBytes?: (n: number) => void): Promise<void> {
    if (existsSync(dest)) return;
    mkdirSync(dirname(dest), { recursive: true });
    const partial = `${dest}.partial`;
    const have = existsSync(partial) ? statSync(partial).size : 0;
    // Abandoned when no byte arrives for the stall time (the partial file keeps what came).
    const stall = new AbortController();
    const stallMs = this.o.stallMs ?? 30_000;
    let timer = setTimeout(() => stall.abort(new Error(`no data for ${stallMs} ms`)), stallMs);
    const touch = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => stall.abort(new Error(`no data for ${stallMs} ms`)), stallMs);
    };
    try {
      await this.download(ref, blob, partial, have, stall.signal, touch, onBytes);
    } finally {
      clearTimeout(timer);
    }
    renameSync(partial, dest);
  }

  private async download(ref: ImageReference, blob: Descriptor, partial: string, have: number, signal: AbortSignal, touch: () => void, onBytes?: (n: number) => void): Promise<void> {
    const res = await this.get(ref, `${this.base(ref)}/blobs/${blob.digest}`, have > 0 && have < blob.size ? { range: `bytes=${have}-` } : {}, signal);
    if (res.status === 404) {
      await res.body?.cancel();
      throw new ImagePullError('IMAGE_NOT_FOUND', `blob ${blob.digest} of ${formatReference(ref)} is missing from registry ${ref.registry}`);
    }
    if (!res.ok || !res.body) {
      await res.body?.cancel();
      throw new ImagePullError('IMAGE_PULL_FAILED', `registry ${ref.registry} answered HTTP ${res.status} for blob ${blob.digest}`);
    }
    const resumed = res.status === 206 && have > 0;
    const hash = createHash('sha256');
    if (resumed) for await (const chunk of createReadStream(partial)) hash.update(chunk as Buffer);
    let size = resumed ? have : 0;
    const body = Readable.fromWeb(res.body as WebReadableStream<Uint8Array>);
    body.on('data', (chunk: Buffer) => {
      touch();
      hash.update(chunk);
      size += chunk.length;
      // More than the descriptor says is never written: a hostile registry cannot fill the disk.
      if (size > blob.size) body.destroy(new Error(`more than the ${blob.size} bytes its descriptor names`));
      onBytes?.(chunk.length);
    });
    try {
      await pipeline(body, createWriteStream(partial, { flags: resumed ? 'a' : 'w' }));
    } catch (e) {
      if (size > blob.size) {
        rmSync(partial, { force: true });
        throw new ImagePullError('IMAGE_DIGEST_MISMATCH', `blob ${blob.digest} of ${formatReference(ref)} is longer than its ${blob.size} bytes: refused`);
      }
      // The bytes written so far stay in the partial file for the next attempt.
      throw new ImagePullError('IMAGE_PULL_FAILED', `download of blob ${blob.digest} from ${ref.registry} broke off: ${(e as Error).message}`);
    }
    const got = `sha256:${hash.digest('hex')}`;
    if (got !== blob.digest || size !== blob.size) {
      rmSync(partial, { force: true });
      throw new ImagePullError('IMAGE_DIGEST_MISMATCH', `blob of ${formatReference(ref)} hashes to ${got} (${size} bytes), not ${blob.digest} (${blob.size} bytes): refused`);
    }
  }
}

function parseManifest(ref: ImageReference, body: Buffer): ImageManifest {
  const r = ManifestSchema.safeParse(JSON.parse(body.toString('utf8')));
  if (!r.success) throw new ImagePullError('IMAGE_PULL_FAILED', `the manifest of ${formatReference(ref)} is not an OCI or Docker v2 image manifest`);
  return r.data;
}

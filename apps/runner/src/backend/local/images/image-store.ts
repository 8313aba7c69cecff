import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { parseRunConfig, resolveImageUser, RunConfigSchema, type SandboxUser } from './image-config';
import { ImagePullError } from './pull-error';
import { formatReference, parseImageReference, type ImageReference } from './reference';
import type { Descriptor, RegistryClient, RegistryCredential } from './registry-client';
import { freshRoot, normalizeOwnership, scanWhiteouts, unpackLayer, type LayerWhiteouts } from './unpack-layer';

/** What the store keeps beside each unpacked root filesystem (`<dir>/images/<hex>/image.json`). */
const StoredImageMetaSchema = z.strictObject({
  digest: z.string(),
  reference: z.string(),
  run: RunConfigSchema,
  user: z.strictObject({ uid: z.number().int(), gid: z.number().int() }).optional(),
  sizeBytes: z.number().int().nonnegative(),
  lastUsedMs: z.number(),
  /**
   * The registry asked for a credential and was given one a create delivered: a create that
   * names the image by digest is then served from the cache only after the registry has let that
   * create's own credentials (or anonymous access) read the manifest.
   */
  gatedByCredentials: z.boolean().optional(),
});
type StoredImageMeta = z.infer<typeof StoredImageMetaSchema>;

/** A pulled image ready to run: its read-only root and how it starts. */
export interface StoredImage {
  /** Digest of the image's (platform) manifest: its identity in the cache. */
  digest: string;
  rootfs: string;
  run: StoredImageMeta['run'];
  user?: SandboxUser;
  /** Pulled with credentials a create delivered (see `gatedByCredentials`). */
  gatedByCredentials: boolean;
}

export interface ImageStoreOptions {
  dir: string;
  client: RegistryClient;
  /** The cache's bound; least recently used images no sandbox runs are removed past it. */
  maxBytes: number;
  /** Host uid/gid the sandboxes run as: the image user's own files are given to them. */
  hostUid: number;
  hostGid: number;
  /** Digests of images that sandboxes (live or not yet reaped) use: never collected. */
  inUse: () => Set<string>;
}

const LAYER_TYPES = new Set([
  'application/vnd.oci.image.layer.v1.tar',
  'application/vnd.oci.image.layer.v1.tar+gzip',
  'application/vnd.docker.image.rootfs.diff.tar.gzip',
]);

const hex = (digest: string): string => digest.slice('sha256:'.length);

/**
 * Content-addressed image cache: blobs are downloaded into `blobs/` (kept partial across a
 * restart, resumed on the next pull), layers applied in order into a staging root, and the
 * finished root renamed into `images/<manifest hex>/rootfs`, which every sandbox of that image
 * mounts read-only. Concurrent pulls of one image share one promise.
 */
export class ImageStore {
  private readonly inflight = new Map<string, Promise<StoredImage>>();
  /** Completed pulls (downloads and unpacks) since the store was made. */
  pulls = 0;

  constructor(private readonly o: ImageStoreOptions) {
    // 0711: sandboxes traverse to their image's root; nobody lists the cache.
    mkdirSync(o.dir, { recursive: true, mode: 0o711 });
    chmodSync(o.dir, 0o711);
    mkdirSync(join(o.dir, 'blobs'), { recursive: true, mode: 0o700 });
    mkdirSync(join(o.dir, 'images'), { recursive: true, mode: 0o711 });
    // Staging roots of pulls a previous runner did not finish (their blobs stay, to resume).
    for (const name of readdirSync(join(o.dir, 'images'))) {
      if (name.includes('.staging-')) rmSync(join(o.dir, 'images', name), { recursive: true, force: true });
    }
  }

  private imageDir(digest: string): string {
    return join(this.o.dir, 'images', hex(digest));
  }

  private cached(digest: string): StoredImage | undefined {
    let meta: StoredImageMeta;
    try {
      meta = StoredImageMetaSchema.parse(JSON.parse(readFileSync(join(this.imageDir(digest), 'image.json'), 'utf8')));
    } catch {
      return undefined;
    }
    meta.lastUsedMs = Date.now();
    writeFileSync(join(this.imageDir(digest), 'image.json'), JSON.stringify(meta));
    return { digest, rootfs: join(this.imageDir(digest), 'rootfs'), run: meta.run, ...(meta.user ? { user: meta.user } : {}), gatedByCredentials: meta.gatedByCredentials === true };
  }

  /**
   * The image for a reference, pulled when not cached. A digest reference that is cached needs no
   * registry; a tag is resolved at the registry every time (tags move). `admitDigest` sees the
   * resolved manifest first and throws to refuse it. `credentials` (the create's own, by registry)
   * win over the runner's for this pull only: they are held by a client made for it and dropped
   * with it.
   */
  async ensure(
    reference: string,
    onProgress?: (message: string) => void,
    admitDigest?: (resolved: { digest: string; referenceDigest: string }) => void,
    credentials?: Readonly<Record<string, RegistryCredential>>,
  ): Promise<StoredImage> {
    const ref = parseImageReference(reference);
    if (!ref) throw new ImagePullError('IMAGE_NOT_FOUND', `${JSON.stringify(reference)} is not an image reference ([registry/]repository[:tag][@sha256:digest])`);
    if (ref.digest) {
      const hit = this.cached(ref.digest);
      // An image that took a create's credentials to pull is not handed to another create on the
      // strength of the digest alone: the registry is asked below, with this create's credentials.
      if (hit && !hit.gatedByCredentials) return hit;
    }
    const client = credentials && Object.keys(credentials).length > 0 ? this.o.client.withCredentials(credentials) : this.o.client;
    const resolved = await client.resolve(ref);
    // The policy's condition on what a tag resolves to, checked before anything is downloaded.
    admitDigest?.(resolved);
    if (ref.digest && resolved.digest !== ref.digest) {
      // The reference pinned an index; the platform manifest it leads to is what gets cached.
      const hit = this.cached(resolved.digest);
      if (hit) return hit;
    }
    const hit = this.cached(resolved.digest);
    if (hit) return hit;
    let pull = this.inflight.get(resolved.digest);
    if (pull) onProgress?.(`waiting for the pull of ${formatReference(ref)} already under way`);
    else {
      const gated = credentials?.[ref.registry] !== undefined && client.presentedCredentialsTo(ref.registry);
      pull = this.pull(client, ref, resolved.digest, resolved.manifest, gated, onProgress).finally(() => this.inflight.delete(resolved.digest));
      this.inflight.set(resolved.digest, pull);
    }
    return pull;
  }

  private async pull(
    client: RegistryClient,
    ref: ImageReference,
    digest: string,
    manifest: { config: Descriptor; layers: Descriptor[] },
    gatedByCredentials: boolean,
    onProgress?: (message: string) => void,
  ): Promise<StoredImage> {
    for (const l of manifest.layers) {
      if (!LAYER_TYPES.has(l.mediaType)) {
        throw new ImagePullError('IMAGE_PULL_FAILED', `layer ${l.digest} of ${formatReference(ref)} has media type ${l.mediaType}, which the local backend cannot unpack (it takes tar and tar+gzip layers)`);
      }
    }
    const blob = (d: Descriptor): string => join(this.o.dir, 'blobs', hex(d.digest));
    const total = manifest.layers.reduce((n, l) => n + l.size, manifest.config.size);
    let done = 0;
    let lastReport = 0;
    const progress = (n: number): void => {
      done += n;
      if (onProgress && (done - lastReport > total / 10 || done === total)) {
        lastReport = done;
        onProgress(`pulling image ${formatReference(ref)}: ${mib(done)} of ${mib(total)} MiB`);
      }
    };
    onProgress?.(`pulling image ${formatReference(ref)} (${manifest.layers.length} layers, ${mib(total)} MiB)`);
    await client.fetchBlob(ref, manifest.config, blob(manifest.config), progress);
    const run = parseRunConfig(readFileSync(blob(manifest.config)));
    // Up to three downloads at a time, each layer's whiteouts read as soon as it is in (while
    // the others download); layers are applied in order once all are in.
    const queue = [...manifest.layers];
    const scans = new Map<string, Promise<LayerWhiteouts>>();
    await Promise.all(
      [0, 1, 2].map(async () => {
        for (let l = queue.shift(); l; l = queue.shift()) {
          await client.fetchBlob(ref, l, blob(l), progress);
          const scan = scanWhiteouts(blob(l));
          scan.catch(() => undefined);
          scans.set(l.digest, scan);
        }
      }),
    );
    onProgress?.(`unpacking image ${formatReference(ref)}`);
    const staging = `${this.imageDir(digest)}.staging-${randomBytes(4).toString('hex')}`;
    const root = join(staging, 'rootfs');
    try {
      mkdirSync(staging, { mode: 0o711 });
      freshRoot(root);
      for (const l of manifest.layers) await unpackLayer(blob(l), root, scans.get(l.digest));
      const user = resolveImageUser(root, run.user);
      if (run.workingDir) ensureWorkingDir(root, run.workingDir);
      const sizeBytes = normalizeOwnership(root, user?.uid, this.o.hostUid, this.o.hostGid);
      const meta: StoredImageMeta = { digest, reference: formatReference(ref), run, ...(user ? { user } : {}), sizeBytes, lastUsedMs: Date.now(), ...(gatedByCredentials ? { gatedByCredentials } : {}) };
      writeFileSync(join(staging, 'image.json'), JSON.stringify(meta));
      rmSync(this.imageDir(digest), { recursive: true, force: true });
      renameSync(staging, this.imageDir(digest));
    } catch (e) {
      rmSync(staging, { recursive: true, force: true });
      throw e;
    }
    // The unpacked root is the cache; its compressed layers are no longer needed.
    for (const l of [manifest.config, ...manifest.layers]) rmSync(blob(l), { force: true });
    this.pulls++;
    this.collect();
    const stored = this.cached(digest);
    if (!stored) throw new ImagePullError('IMAGE_PULL_FAILED', `image ${formatReference(ref)} vanished from the cache right after its pull`);
    return stored;
  }

  /** Images in the cache, least recently used first. */
  list(): StoredImageMeta[] {
    const out: StoredImageMeta[] = [];
    for (const name of readdirSync(join(this.o.dir, 'images'))) {
      if (name.includes('.staging-')) continue;
      try {
        out.push(StoredImageMetaSchema.parse(JSON.parse(readFileSync(join(this.o.dir, 'images', name, 'image.json'), 'utf8'))));
      } catch {
        // a directory without its record is not a finished image
      }
    }
    return out.sort((a, b) => a.lastUsedMs - b.lastUsedMs);
  }

  /** Removes least recently used images that no sandbox uses until the cache fits its bound. */
  collect(): string[] {
    const images = this.list();
    let total = images.reduce((n, i) => n + i.sizeBytes, 0);
    const inUse = this.o.inUse();
    const removed: string[] = [];
    for (const img of images) {
      if (total <= this.o.maxBytes) break;
      if (inUse.has(img.digest) || this.inflight.has(img.digest)) continue;
      rmSync(this.imageDir(img.digest), { recursive: true, force: true });
      total -= img.sizeBytes;
      removed.push(img.digest);
    }
    return removed;
  }
}

function mib(n: number): string {
  return (n / 1024 / 1024).toFixed(1);
}

/** The image's working directory, created (owned by root) when no layer made it, as Docker does. */
function ensureWorkingDir(root: string, dir: string): void {
  const parts = dir.split('/').filter((p) => p && p !== '.');
  if (parts.includes('..')) throw new ImagePullError('IMAGE_PULL_FAILED', `the image's WorkingDir ${JSON.stringify(dir)} leaves its root`);
  let at = root;
  for (const p of parts) {
    at = join(at, p);
    if (!existsSync(at)) mkdirSync(at, { mode: 0o755 });
    else if (!lstatSync(at).isDirectory()) throw new ImagePullError('IMAGE_PULL_FAILED', `the image's WorkingDir ${JSON.stringify(dir)} is not a directory in the image`);
  }
}


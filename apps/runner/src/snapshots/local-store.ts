import { createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomUUID } from 'node:crypto';
import { SnapshotObjectMetaSchema, type SnapshotObjectMeta } from '@paddock/contracts';
import { SnapshotTooLargeError, type SnapshotStore, type StagedSnapshot } from './snapshot-store';

const SAFE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

function checkId(kind: string, id: string): string {
  if (!SAFE.test(id)) throw new Error(`${kind} ${JSON.stringify(id)} is not a safe store key`);
  return id;
}

/**
 * The embedded snapshot store: `<root>/<organizationId>/<snapshotId>.tar` and `.json` beside it,
 * shared by every runner on this machine (they all point at the same root), so a snapshot taken on
 * one runner restores on another. Writes go to a temporary name and are renamed into place, the
 * metadata last: a snapshot is visible only once whole. Root-only (0700): archives hold tenants' files.
 */
export class LocalSnapshotStore implements SnapshotStore {
  readonly bucket: string;

  constructor(private readonly root: string) {
    this.bucket = `local://${root}`;
  }

  private paths(organizationId: string, snapshotId: string): { dir: string; tar: string; meta: string } {
    const dir = join(this.root, checkId('organizationId', organizationId));
    const id = checkId('snapshotId', snapshotId);
    return { dir, tar: join(dir, `${id}.tar`), meta: join(dir, `${id}.json`) };
  }

  async put(meta: Omit<SnapshotObjectMeta, 'sizeBytes'>, archive: Readable, maxBytes: number): Promise<SnapshotObjectMeta> {
    const p = this.paths(meta.organizationId, meta.snapshotId);
    await mkdir(p.dir, { recursive: true, mode: 0o700 });
    const tmp = `${p.tar}.${randomUUID()}.partial`;
    let size = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        if (size > maxBytes) done(new SnapshotTooLargeError(maxBytes));
        else done(null, chunk);
      },
    });
    try {
      await pipeline(archive, counter, createWriteStream(tmp, { mode: 0o600 }));
      return await this.publish(tmp, { ...meta, sizeBytes: size });
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
  }

  async stage(organizationId: string, snapshotId: string): Promise<StagedSnapshot> {
    const p = this.paths(organizationId, snapshotId);
    await mkdir(p.dir, { recursive: true, mode: 0o700 });
    const tmp = `${p.tar}.${randomUUID()}.partial`;
    return {
      path: tmp,
      commit: async (meta, maxBytes) => {
        const size = (await stat(tmp)).size;
        if (size > maxBytes) {
          await rm(tmp, { force: true });
          throw new SnapshotTooLargeError(maxBytes);
        }
        return this.publish(tmp, { ...meta, sizeBytes: size });
      },
      abort: () => rm(tmp, { force: true }),
    };
  }

  /** Renames a complete archive into place, then its metadata (what makes it visible). */
  private async publish(tmp: string, meta: SnapshotObjectMeta): Promise<SnapshotObjectMeta> {
    const p = this.paths(meta.organizationId, meta.snapshotId);
    await rename(tmp, p.tar);
    await writeFile(`${p.meta}.partial`, JSON.stringify(meta), { mode: 0o600 });
    await rename(`${p.meta}.partial`, p.meta);
    return meta;
  }

  async head(organizationId: string, snapshotId: string): Promise<SnapshotObjectMeta | undefined> {
    let text: string;
    try {
      text = await readFile(this.paths(organizationId, snapshotId).meta, 'utf8');
    } catch {
      return undefined;
    }
    const r = SnapshotObjectMetaSchema.safeParse(JSON.parse(text));
    return r.success && r.data.organizationId === organizationId ? r.data : undefined;
  }

  async localPath(organizationId: string, snapshotId: string): Promise<string> {
    return this.paths(organizationId, snapshotId).tar;
  }

  async delete(organizationId: string, snapshotId: string): Promise<boolean> {
    const p = this.paths(organizationId, snapshotId);
    const existed = (await this.head(organizationId, snapshotId)) !== undefined;
    // Metadata first: a half-deleted snapshot is invisible, never half-restorable.
    await rm(p.meta, { force: true });
    await rm(p.tar, { force: true });
    return existed;
  }
}

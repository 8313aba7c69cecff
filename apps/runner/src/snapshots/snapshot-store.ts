import type { Readable } from 'node:stream';
import type { SnapshotObjectMeta } from '@paddock/contracts';

/**
 * Where snapshot archives live, behind one interface shaped like an object store (one object per
 * snapshot plus its metadata, written whole or not at all), so that an S3-compatible store can
 * take the place of the embedded one without the runner changing. Built: `LocalSnapshotStore`, a
 * directory on this machine shared by its runners. Not built: an S3 implementation.
 */
export interface SnapshotStore {
  /** `local://<dir>`, `s3://<bucket>`: shown as the snapshot's `objectBucket`. */
  readonly bucket: string;
  /**
   * Stores `archive` under the meta's snapshot id. Atomic: until it resolves nothing is visible;
   * if it rejects (the source failed, `maxBytes` was passed) nothing is left behind.
   */
  put(meta: Omit<SnapshotObjectMeta, 'sizeBytes'>, archive: Readable, maxBytes: number): Promise<SnapshotObjectMeta>;
  /**
   * A local file to write the archive into directly (a store on this machine), then `commit`
   * (atomic, checking `maxBytes`) or `abort`. Absent: archives go through `put` as a stream.
   */
  stage?(organizationId: string, snapshotId: string): Promise<StagedSnapshot>;
  /** The metadata, or undefined when there is no such snapshot. */
  head(organizationId: string, snapshotId: string): Promise<SnapshotObjectMeta | undefined>;
  /**
   * A path on this machine holding the archive, for a restore. The local store hands out its own
   * file; a remote store downloads into `scratchDir` first.
   */
  localPath(organizationId: string, snapshotId: string, scratchDir: string): Promise<string>;
  /** Removes the snapshot; false when it was not there. */
  delete(organizationId: string, snapshotId: string): Promise<boolean>;
}

export interface StagedSnapshot {
  path: string;
  commit(meta: Omit<SnapshotObjectMeta, 'sizeBytes'>, maxBytes: number): Promise<SnapshotObjectMeta>;
  abort(): Promise<void>;
}

/** Thrown by `put` when the archive grows past `maxBytes`. */
export class SnapshotTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the snapshot is larger than its limit of ${limit} bytes`);
  }
}

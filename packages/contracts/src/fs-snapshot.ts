import { z } from 'zod';
import { RequestIdSchema } from './request-id';

/**
 * File-system snapshots: a sandbox's writable disk captured into the snapshot store, restorable
 * into a new sandbox (on any runner whose policy admits it) through
 * `volumes[].scratch.restoreFromSnapshotId`.
 *
 * What is captured: on the local backend, the sandbox's own disk (its `/workspace` and `/tmp`),
 * which is the volume named {@link DEFAULT_SNAPSHOT_VOLUME}; every file, directory (empty ones
 * too), symlink and mode, as a tar archive. The sandbox is frozen while it is read, so the
 * capture is consistent under writes.
 */

/** The volume name of a sandbox's own writable disk (the product client's default name too). */
export const DEFAULT_SNAPSHOT_VOLUME = 'workspace';
/** Largest snapshot a runner captures by default (bytes of archive); over it: CWSANDBOX_FSS_SIZE_EXCEEDED. */
export const DEFAULT_MAX_SNAPSHOT_BYTES = 10 * 1024 ** 3;

export const SNAPSHOT_STATES = ['SNAPSHOT_STATE_CREATING', 'SNAPSHOT_STATE_READY', 'SNAPSHOT_STATE_FAILED', 'SNAPSHOT_STATE_DELETING'] as const;
export const SnapshotStateSchema = z.enum(SNAPSHOT_STATES);
export type SnapshotState = z.infer<typeof SnapshotStateSchema>;

export const SNAPSHOT_TRIGGERS = ['SNAPSHOT_TRIGGER_MANUAL', 'SNAPSHOT_TRIGGER_ON_DELETE'] as const;
export const SnapshotTriggerSchema = z.enum(SNAPSHOT_TRIGGERS);
export type SnapshotTrigger = z.infer<typeof SnapshotTriggerSchema>;

/** The public resource (`GET /v1/fileSystemSnapshots/{id}`). */
export const FileSystemSnapshotSchema = z.object({
  fileSystemSnapshotId: z.string(),
  state: SnapshotStateSchema,
  /** A `CWSANDBOX_FSS_*` reason when FAILED, with the detail after a colon. */
  stateReason: z.string().optional(),
  sizeBytes: z.number().int().nonnegative(),
  sourceSandboxId: z.string(),
  sourceVolumeName: z.string(),
  trigger: SnapshotTriggerSchema,
  createTime: z.string(),
  completeTime: z.string().optional(),
  updatedAt: z.string(),
  /** Where the archive is kept: `local://<store>` on the embedded store. */
  objectBucket: z.string(),
  requestId: z.string().optional(),
});
export type FileSystemSnapshot = z.infer<typeof FileSystemSnapshotSchema>;

// ---------------------------------------------------------------------------------------------
// runner RPC (gateway → runner)
// ---------------------------------------------------------------------------------------------

const Ref = {
  trace: z.object({ requestId: RequestIdSchema }).optional(),
  sandboxId: z.string().min(1),
  organizationId: z.string().min(1),
};

/** Captures one volume of a live sandbox into the store under `snapshotId` (chosen by the gateway). */
export const SnapshotSandboxRequestSchema = z.object({
  ...Ref,
  snapshotId: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/),
  volumeName: z.string().min(1).default(DEFAULT_SNAPSHOT_VOLUME),
  maxBytes: z.number().int().positive().default(DEFAULT_MAX_SNAPSHOT_BYTES),
});
export type SnapshotSandboxRequest = z.infer<typeof SnapshotSandboxRequestSchema>;
export type SnapshotSandboxRequestInput = z.input<typeof SnapshotSandboxRequestSchema>;
export const SnapshotSandboxResponseSchema = z.object({
  sizeBytes: z.number().int().nonnegative(),
  /** How long the sandbox was frozen for the capture. */
  frozenMs: z.number().nonnegative(),
  completeTime: z.string(),
  objectBucket: z.string(),
});
export type SnapshotSandboxResponse = z.infer<typeof SnapshotSandboxResponseSchema>;

/** Removes a snapshot's archive from the store (any runner sharing the store can). Idempotent. */
export const DeleteSnapshotRequestSchema = z.object({
  trace: z.object({ requestId: RequestIdSchema }).optional(),
  organizationId: z.string().min(1),
  snapshotId: z.string().min(1),
});
export type DeleteSnapshotRequest = z.infer<typeof DeleteSnapshotRequestSchema>;
export const DeleteSnapshotResponseSchema = z.object({ deleted: z.boolean() });

/**
 * The metadata beside each archive in the store, written by the runner that captured it and read
 * by whichever runner restores it (so a restore checks the organization itself).
 */
export const SnapshotObjectMetaSchema = z.object({
  v: z.literal(1),
  snapshotId: z.string(),
  organizationId: z.string(),
  sourceSandboxId: z.string(),
  volumeName: z.string(),
  sizeBytes: z.number().int().nonnegative(),
  format: z.literal('tar'),
  createdAt: z.string(),
});
export type SnapshotObjectMeta = z.infer<typeof SnapshotObjectMetaSchema>;

import {
  DEFAULT_SNAPSHOT_VOLUME,
  DeleteSnapshotRequestSchema,
  PaddockError,
  SnapshotSandboxRequestSchema,
  type SandboxSpec,
  type SnapshotSandboxResponse,
} from '@paddock/contracts';
import type { SandboxBackend } from '../backend/sandbox-backend';
import { SnapshotTooLargeError, type SnapshotStore } from '../snapshots/snapshot-store';
import { invalidRequest } from './errors';

/**
 * The runner's half of file-system snapshots: capture a live sandbox's disk into the shared store
 * (the gateway keeps the snapshot resource and its state), remove an archive, and find the archive
 * a new sandbox restores from. What a snapshot holds on the local backend is the sandbox's own
 * writable disk, the volume named `workspace`; other scratch volumes are refused by name until a
 * backend mounts them separately.
 */
export class RunnerSnapshots {
  constructor(
    private readonly backend: SandboxBackend,
    private readonly store: SnapshotStore | undefined,
  ) {}

  /** Captures `volumeName` of a live sandbox; `spec` is the sandbox's accepted spec. */
  async capture(body: unknown, spec: SandboxSpec, sourceSandboxId: string): Promise<SnapshotSandboxResponse> {
    const r = SnapshotSandboxRequestSchema.safeParse(body);
    if (!r.success) throw invalidRequest(r.error);
    const req = r.data;
    checkSnapshottable(spec, req.volumeName);
    const store = this.store;
    const snapshotDisk = this.backend.snapshotDisk?.bind(this.backend);
    if (!store || !snapshotDisk) throw notSupported(`the ${this.backend.kind} backend does not take file-system snapshots`, 'scratchVolumeName');
    let sizeBytes = 0;
    const meta = { v: 1 as const, snapshotId: req.snapshotId, organizationId: req.organizationId, sourceSandboxId, volumeName: req.volumeName, format: 'tar' as const, createdAt: new Date().toISOString() };
    const staged = await store.stage?.(req.organizationId, req.snapshotId);
    try {
      const { frozenMs } = await snapshotDisk(
        sourceSandboxId,
        staged
          ? { file: staged.path }
          : {
              write: async (archive) => {
                sizeBytes = (await store.put(meta, archive, req.maxBytes)).sizeBytes;
              },
            },
      );
      // Committed after the sandbox thawed: the rename and the size check need no frozen time.
      if (staged) sizeBytes = (await staged.commit(meta, req.maxBytes)).sizeBytes;
      return { sizeBytes, frozenMs, completeTime: new Date().toISOString(), objectBucket: store.bucket };
    } catch (e) {
      await staged?.abort();
      if (e instanceof SnapshotTooLargeError) {
        throw new PaddockError('resource_exhausted', `the snapshot of ${sourceSandboxId} is over its limit of ${e.limit} bytes`, {
          reason: 'CWSANDBOX_FSS_SIZE_EXCEEDED',
          violations: [{ field: 'maxBytes', rule: 'max_bytes', description: 'the archive grew past the limit', limit: e.limit }],
        });
      }
      if (e instanceof PaddockError) throw e;
      throw new PaddockError('internal', `capturing ${sourceSandboxId} failed: ${(e as Error).message}`, { reason: 'CWSANDBOX_FSS_CREATE_FAILED' });
    }
  }

  async delete(body: unknown): Promise<{ deleted: boolean }> {
    const r = DeleteSnapshotRequestSchema.safeParse(body);
    if (!r.success) throw invalidRequest(r.error);
    if (!this.store) return { deleted: false };
    return { deleted: await this.store.delete(r.data.organizationId, r.data.snapshotId) };
  }

  /**
   * The archive a new sandbox restores from (`volumes[].scratch.restoreFromSnapshotId`), or
   * undefined when it asks for none. The store's own metadata is checked for the organization, so
   * one tenant's id never restores another's files.
   */
  async restoreArchiveFor(organizationId: string, spec: SandboxSpec, scratchDir: string): Promise<string | undefined> {
    const volumes = spec.volumes ?? [];
    const i = volumes.findIndex((v) => v.scratch?.restoreFromSnapshotId);
    if (i < 0) return undefined;
    const v = volumes[i];
    const id = v?.scratch?.restoreFromSnapshotId as string;
    const field = `volumes[${i}].scratch.restoreFromSnapshotId`;
    // Only the sandbox's own disk (`workspace`) restores: a restore into any other volume was
    // refused at create, naming its field (`podViolations`).
    if (!this.store || !this.backend.snapshotDisk) throw notSupported(`the ${this.backend.kind} backend does not restore file-system snapshots`, field);
    const meta = await this.store.head(organizationId, id);
    if (!meta) {
      throw new PaddockError('not_found', `file-system snapshot ${id} not found`, {
        reason: 'CWSANDBOX_FSS_NOT_FOUND',
        violations: [{ field, rule: 'exists', description: 'a READY snapshot of this organization' }],
      });
    }
    return this.store.localPath(organizationId, id, scratchDir);
  }
}

function notSupported(message: string, field: string): PaddockError {
  return new PaddockError('failed_precondition', message, {
    reason: 'CWSANDBOX_FSS_NOT_SUPPORTED',
    violations: [{ field, rule: 'runner_capability', description: message }],
  });
}

/** Only scratch storage is snapshotted: a registered volume is shared and live, an unknown name is an error. */
function checkSnapshottable(spec: SandboxSpec, volumeName: string): void {
  const declared = (spec.volumes ?? []).find((v) => v.name === volumeName);
  if (declared?.volumeId) {
    throw new PaddockError('invalid_argument', `volume ${volumeName} is a registered volume: registered volumes are live and shared, never snapshotted`, {
      reason: 'CWSANDBOX_VOLUME_NOT_SNAPSHOTTABLE',
      violations: [{ field: 'scratchVolumeName', rule: 'scratch_only', description: 'only scratch volumes are snapshotted' }],
    });
  }
  if (volumeName === DEFAULT_SNAPSHOT_VOLUME) return;
  if (declared) throw notSupported(`scratch volume ${volumeName} is not captured separately by this runner; snapshot ${JSON.stringify(DEFAULT_SNAPSHOT_VOLUME)}, the sandbox's disk`, 'scratchVolumeName');
  throw new PaddockError('invalid_argument', `the sandbox has no volume named ${volumeName}`, {
    reason: 'CWSANDBOX_INVALID_REQUEST',
    violations: [{ field: 'scratchVolumeName', rule: 'known_volume', description: `a scratch volume of the sandbox, or ${DEFAULT_SNAPSHOT_VOLUME}` }],
  });
}

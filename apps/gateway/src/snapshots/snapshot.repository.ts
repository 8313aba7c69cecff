import type { Kysely, Selectable } from 'kysely';
import type { FileSystemSnapshot, SnapshotState, SnapshotTrigger } from '@paddock/contracts';
import type { GatewayDatabase, GwFsSnapshotsTable } from '../db/database';

export type SnapshotRow = Selectable<GwFsSnapshotsTable>;

export interface NewSnapshot {
  id: string;
  organizationId: string;
  sourceSandboxId: string;
  sourceVolumeName: string;
  sourceRunnerId: string;
  trigger: SnapshotTrigger;
  requestId: string | null;
  requestFingerprint: string | null;
  now: Date;
}

/** The file-system snapshot rows (`gw_fs_snapshots`): the resource and its state. */
export class SnapshotRepository {
  constructor(private readonly db: Kysely<GatewayDatabase>) {}

  /** Inserts in CREATING; a row with the same organization and request id wins (returned, `created: false`). */
  async insert(n: NewSnapshot): Promise<{ row: SnapshotRow; created: boolean }> {
    const inserted = await this.db
      .insertInto('gw_fs_snapshots')
      .values({
        id: n.id,
        organization_id: n.organizationId,
        source_sandbox_id: n.sourceSandboxId,
        source_volume_name: n.sourceVolumeName,
        source_runner_id: n.sourceRunnerId,
        trigger: n.trigger,
        state: 'SNAPSHOT_STATE_CREATING',
        request_id: n.requestId,
        request_fingerprint: n.requestFingerprint,
        create_time: n.now,
        updated_at: n.now,
      })
      .onConflict((oc) => oc.columns(['organization_id', 'request_id']).where('request_id', 'is not', null).doNothing())
      .returningAll()
      .executeTakeFirst();
    if (inserted) return { row: inserted, created: true };
    const prior = n.requestId ? await this.byRequestId(n.organizationId, n.requestId) : undefined;
    if (!prior) throw new Error(`snapshot ${n.id} was neither inserted nor found`);
    return { row: prior, created: false };
  }

  byRequestId(organizationId: string, requestId: string): Promise<SnapshotRow | undefined> {
    return this.db.selectFrom('gw_fs_snapshots').selectAll().where('organization_id', '=', organizationId).where('request_id', '=', requestId).executeTakeFirst();
  }

  find(organizationId: string, id: string): Promise<SnapshotRow | undefined> {
    return this.db.selectFrom('gw_fs_snapshots').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  }

  /** Newest first, keyset-paged by (create_time, id). */
  list(organizationId: string, sourceSandboxId: string | undefined, limit: number, after?: { createTime: Date; id: string }): Promise<SnapshotRow[]> {
    let q = this.db.selectFrom('gw_fs_snapshots').selectAll().where('organization_id', '=', organizationId);
    if (sourceSandboxId) q = q.where('source_sandbox_id', '=', sourceSandboxId);
    if (after) q = q.where((eb) => eb.or([eb('create_time', '<', after.createTime), eb.and([eb('create_time', '=', after.createTime), eb('id', '<', after.id)])]));
    return q.orderBy('create_time', 'desc').orderBy('id', 'desc').limit(limit).execute();
  }

  /** Moves a snapshot on from CREATING (only from there: a late answer never revives a deleted one). */
  async finish(id: string, state: SnapshotState, fields: { sizeBytes?: number; reason?: string; objectBucket?: string; completeTime?: Date }, now: Date): Promise<void> {
    await this.db
      .updateTable('gw_fs_snapshots')
      .set({
        state,
        updated_at: now,
        ...(fields.sizeBytes !== undefined ? { size_bytes: fields.sizeBytes } : {}),
        ...(fields.reason !== undefined ? { state_reason: fields.reason } : {}),
        ...(fields.objectBucket !== undefined ? { object_bucket: fields.objectBucket } : {}),
        ...(fields.completeTime ? { complete_time: fields.completeTime } : {}),
      })
      .where('id', '=', id)
      .where('state', '=', 'SNAPSHOT_STATE_CREATING')
      .execute();
  }

  async markDeleting(organizationId: string, id: string, now: Date): Promise<SnapshotRow | undefined> {
    return this.db
      .updateTable('gw_fs_snapshots')
      .set({ state: 'SNAPSHOT_STATE_DELETING', updated_at: now })
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
  }

  async remove(id: string): Promise<void> {
    await this.db.deleteFrom('gw_fs_snapshots').where('id', '=', id).execute();
  }
}

export function toSnapshotView(row: SnapshotRow): FileSystemSnapshot {
  return {
    fileSystemSnapshotId: row.id,
    state: row.state as SnapshotState,
    ...(row.state_reason ? { stateReason: row.state_reason } : {}),
    sizeBytes: Number(row.size_bytes),
    sourceSandboxId: row.source_sandbox_id,
    sourceVolumeName: row.source_volume_name,
    trigger: row.trigger as SnapshotTrigger,
    createTime: new Date(row.create_time).toISOString(),
    ...(row.complete_time ? { completeTime: new Date(row.complete_time).toISOString() } : {}),
    updatedAt: new Date(row.updated_at).toISOString(),
    objectBucket: row.object_bucket,
    ...(row.request_id ? { requestId: row.request_id } : {}),
  };
}

import { randomUUID } from 'node:crypto';
import {
  DEFAULT_SNAPSHOT_VOLUME,
  PaddockError,
  type FileSystemSnapshot,
  type SandboxSpec,
  type SnapshotTrigger,
} from '@paddock/contracts';
import type { Principal } from '../auth/token-authenticator';
import type { RunnerClient } from '../runners/runner-client';
import { invalid, parseCreateRequest } from '../sandboxes/request-parsing';
import type { SandboxLifecycleService } from '../sandboxes/sandbox-lifecycle.service';
import { isTerminalRow, type SandboxRow, type SandboxView } from '../sandboxes/sandbox-view';
import { decodePageToken, encodePageToken } from '../sandboxes/sandbox-lifecycle.service';
import { toSnapshotView, type SnapshotRepository, type SnapshotRow } from './snapshot.repository';

/** A capture that has not answered in this long is FAILED (`CWSANDBOX_FSS_CREATE_TIMED_OUT`). */
const CAPTURE_TIMEOUT_MS = 300_000;
const MAX_REQUEST_ID_BYTES = 128;

function requestIdOf(v: unknown): string | null {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string' || Buffer.byteLength(v) > MAX_REQUEST_ID_BYTES) {
    throw invalid(`requestId must be a string of at most ${MAX_REQUEST_ID_BYTES} UTF-8 bytes`, [{ field: 'requestId', rule: 'max_bytes', description: `at most ${MAX_REQUEST_ID_BYTES} bytes` }]);
  }
  return v;
}

function notFound(id: string): PaddockError {
  return new PaddockError('not_found', `file-system snapshot ${id} not found`, { reason: 'CWSANDBOX_FSS_NOT_FOUND', metadata: { fileSystemSnapshotId: id } });
}

function reusedRequestId(): PaddockError {
  return invalid('requestId was already used for a different snapshot request', [{ field: 'requestId', rule: 'idempotency_mismatch', description: 'reuse a requestId only with identical fields' }]);
}

/**
 * Which volume of the sandbox a snapshot captures: the sandbox's own disk (`workspace`) or one of
 * its scratch volumes; a registered volume is live and shared, so never snapshotted.
 */
export function checkSnapshotVolume(spec: SandboxSpec, volume: string, field: string): void {
  const declared = (spec.volumes ?? []).find((v) => v.name === volume);
  if (declared?.volumeId) {
    throw new PaddockError('invalid_argument', `volume ${volume} is a registered volume: registered volumes are never snapshotted`, {
      reason: 'CWSANDBOX_VOLUME_NOT_SNAPSHOTTABLE',
      violations: [{ field, rule: 'scratch_only', description: 'only scratch volumes are snapshotted' }],
    });
  }
  if (!declared && volume !== DEFAULT_SNAPSHOT_VOLUME) {
    throw invalid(`the sandbox has no volume named ${volume}`, [{ field, rule: 'known_volume', description: `a scratch volume of the sandbox, or ${DEFAULT_SNAPSHOT_VOLUME} (its own disk)` }]);
  }
}

/**
 * File-system snapshots through the gateway: the row is written first (CREATING), the owning
 * runner captures into the shared store, and the row moves to READY or FAILED with its reason.
 */
export class SnapshotsService {
  constructor(
    private readonly repo: SnapshotRepository,
    private readonly lifecycle: SandboxLifecycleService,
    private readonly runners: RunnerClient,
    /** Fresh runners of an organization (any of them reaches the shared store). */
    private readonly runnersOf: (organizationId: string) => string[],
    private readonly now: () => Date = () => new Date(),
    private readonly newId: () => string = randomUUID,
  ) {}

  private async liveSandbox(principal: Principal, sandboxId: string): Promise<SandboxRow> {
    const row = await this.lifecycle.load(principal, sandboxId);
    if (isTerminalRow(row)) {
      throw new PaddockError('failed_precondition', `sandbox ${sandboxId} is ${row.state}: only a live sandbox can be snapshotted`, {
        reason: 'CWSANDBOX_SANDBOX_TERMINATED',
        metadata: { state: row.state },
      });
    }
    return row;
  }

  /** `POST /v1/sandboxes/{id}:snapshot`: returns the snapshot in CREATING (or the original, on a replay). */
  async create(principal: Principal, sandboxId: string, body: Record<string, unknown>): Promise<FileSystemSnapshot> {
    const requestId = requestIdOf(body.requestId);
    const volume = body.scratchVolumeName === undefined || body.scratchVolumeName === '' ? DEFAULT_SNAPSHOT_VOLUME : body.scratchVolumeName;
    if (typeof volume !== 'string') throw invalid('scratchVolumeName must be a string', [{ field: 'scratchVolumeName', rule: 'type', description: 'a volume name' }]);
    if (requestId) {
      const prior = await this.repo.byRequestId(principal.organizationId, requestId);
      if (prior) return this.replay(prior, `${sandboxId}|${volume}`);
    }
    const row = await this.liveSandbox(principal, sandboxId);
    checkSnapshotVolume(row.spec as SandboxSpec, volume, 'scratchVolumeName');
    const { row: snap, created } = await this.insert(row, volume, 'SNAPSHOT_TRIGGER_MANUAL', requestId, `${sandboxId}|${volume}`);
    if (!created) return this.replay(snap, `${sandboxId}|${volume}`);
    void this.capture(snap, row);
    return toSnapshotView(snap);
  }

  private replay(prior: SnapshotRow, fingerprint: string): FileSystemSnapshot {
    if (prior.request_fingerprint !== fingerprint) throw reusedRequestId();
    return toSnapshotView(prior);
  }

  private insert(row: SandboxRow, volume: string, trigger: SnapshotTrigger, requestId: string | null, fingerprint: string | null): Promise<{ row: SnapshotRow; created: boolean }> {
    return this.repo.insert({
      id: this.newId(),
      organizationId: row.organization_id,
      sourceSandboxId: row.id,
      sourceVolumeName: volume,
      sourceRunnerId: row.runner_id,
      trigger,
      requestId,
      requestFingerprint: fingerprint,
      now: this.now(),
    });
  }

  /** Asks the owning runner to capture; the row says how it went. Never throws. */
  private async capture(snap: SnapshotRow, row: SandboxRow, timeoutMs = CAPTURE_TIMEOUT_MS): Promise<void> {
    try {
      const r = await this.runners.call(
        row.runner_id,
        'snapshot',
        { sandboxId: row.id, organizationId: row.organization_id, snapshotId: snap.id, volumeName: snap.source_volume_name },
        timeoutMs,
      );
      await this.repo.finish(snap.id, 'SNAPSHOT_STATE_READY', { sizeBytes: r.sizeBytes, objectBucket: r.objectBucket, completeTime: new Date(r.completeTime) }, this.now());
    } catch (e) {
      const err = e instanceof PaddockError ? e : undefined;
      const timedOut = !err && /timeout|timed out/i.test(String(e));
      const reason = err?.reason?.startsWith('CWSANDBOX_') ? err.reason : timedOut ? 'CWSANDBOX_FSS_CREATE_TIMED_OUT' : 'CWSANDBOX_FSS_CREATE_FAILED';
      await this.repo
        .finish(snap.id, 'SNAPSHOT_STATE_FAILED', { reason: `${reason}: ${err?.message ?? String(e)}`, completeTime: this.now() }, this.now())
        .catch(() => undefined);
    }
  }

  async get(principal: Principal, id: string): Promise<FileSystemSnapshot> {
    return toSnapshotView(await this.load(principal, id));
  }

  private async load(principal: Principal, id: string): Promise<SnapshotRow> {
    const row = await this.repo.find(principal.organizationId, id);
    if (!row) throw notFound(id);
    // A capture whose gateway went away before it answered never will: it is over.
    if (row.state === 'SNAPSHOT_STATE_CREATING' && this.now().getTime() - new Date(row.updated_at).getTime() > CAPTURE_TIMEOUT_MS + 60_000) {
      await this.repo.finish(row.id, 'SNAPSHOT_STATE_FAILED', { reason: 'CWSANDBOX_FSS_CREATE_TIMED_OUT: the capture never reported back' }, this.now());
      return (await this.repo.find(principal.organizationId, id)) ?? row;
    }
    return row;
  }

  async list(principal: Principal, q: { sourceSandboxId?: string; pageSize?: number; pageToken?: string }): Promise<{ fileSystemSnapshots: FileSystemSnapshot[]; nextPageToken: string }> {
    const size = Math.min(100, q.pageSize || 50);
    const after = q.pageToken ? decodePageToken(q.pageToken) : undefined;
    const rows = await this.repo.list(principal.organizationId, q.sourceSandboxId, size + 1, after);
    const page = rows.slice(0, size);
    const last = page[page.length - 1];
    return {
      fileSystemSnapshots: page.map(toSnapshotView),
      nextPageToken: rows.length > size && last ? encodePageToken(new Date(last.create_time), last.id) : '',
    };
  }

  /** DELETE: removes the archive from the store through a runner, then the row; returns it DELETING. */
  async delete(principal: Principal, id: string, allowMissing: boolean): Promise<FileSystemSnapshot | Record<string, never>> {
    const existing = await this.repo.find(principal.organizationId, id);
    if (!existing) {
      if (allowMissing) return {};
      throw notFound(id);
    }
    if (existing.state === 'SNAPSHOT_STATE_CREATING') {
      throw new PaddockError('failed_precondition', `file-system snapshot ${id} is still being created`, { reason: 'CWSANDBOX_FSS_NOT_READY', metadata: { fileSystemSnapshotId: id } });
    }
    const row = (await this.repo.markDeleting(principal.organizationId, id, this.now())) ?? existing;
    const candidates = [row.source_runner_id, ...this.runnersOf(principal.organizationId).filter((r) => r !== row.source_runner_id)];
    for (const runnerId of candidates) {
      try {
        await this.runners.call(runnerId, 'deleteSnapshot', { organizationId: principal.organizationId, snapshotId: id });
        await this.repo.remove(id);
        return toSnapshotView(row);
      } catch {
        // that runner is gone: the next one shares the store
      }
    }
    throw new PaddockError('unavailable', `no runner could remove snapshot ${id} from the store; it stays DELETING, retry later`, { reason: 'CWSANDBOX_RUNNER_UNAVAILABLE' });
  }

  /**
   * DeleteSandbox with `snapshotVolumes`: one snapshot per name, in order, captured before the
   * sandbox stops (each bounded by the grace period, at least a minute); termination proceeds
   * whatever their outcome. A replayed `requestId` returns the original receipt.
   */
  async deleteSandbox(
    principal: Principal,
    sandboxId: string,
    grace: number,
    allowMissing: boolean,
    volumes: string[],
    requestIdRaw: unknown,
  ): Promise<{ sandbox?: SandboxView; fileSystemSnapshotIds?: string[] }> {
    if (volumes.length === 0) return this.lifecycle.delete(principal, sandboxId, grace, allowMissing);
    const requestId = requestIdOf(requestIdRaw);
    const fingerprint = `${sandboxId}|${volumes.join(',')}`;
    if (requestId) {
      const prior = await this.repo.byRequestId(principal.organizationId, `${requestId}#0`);
      if (prior) {
        if (prior.request_fingerprint !== fingerprint) throw reusedRequestId();
        const ids = await Promise.all(volumes.map(async (_v, i) => (await this.repo.byRequestId(principal.organizationId, `${requestId}#${i}`))?.id ?? ''));
        return { sandbox: await this.lifecycle.get(principal, sandboxId), fileSystemSnapshotIds: ids };
      }
    }
    const row = await this.liveSandbox(principal, sandboxId);
    volumes.forEach((v, i) => checkSnapshotVolume(row.spec as SandboxSpec, v, `snapshotVolumes[${i}]`));
    const ids: string[] = [];
    for (const [i, volume] of volumes.entries()) {
      const { row: snap } = await this.insert(row, volume, 'SNAPSHOT_TRIGGER_ON_DELETE', requestId ? `${requestId}#${i}` : null, requestId ? fingerprint : null);
      ids.push(snap.id);
      await this.capture(snap, row, Math.max(60, grace) * 1000);
    }
    const res = await this.lifecycle.delete(principal, sandboxId, grace, allowMissing);
    return { ...res, fileSystemSnapshotIds: ids };
  }

  /**
   * Before a create: every `volumes[].scratch.restoreFromSnapshotId` must name a READY snapshot
   * of the caller's organization (the runner checks the store again when it restores).
   */
  async checkRestore(principal: Principal, body: unknown, queryRequestId?: string): Promise<void> {
    let spec: SandboxSpec;
    try {
      spec = parseCreateRequest(body, queryRequestId).spec;
    } catch {
      return; // the create reports its own parse errors
    }
    for (const [i, v] of (spec.volumes ?? []).entries()) {
      const id = v.scratch?.restoreFromSnapshotId;
      if (!id) continue;
      const field = `volumes[${i}].scratch.restoreFromSnapshotId`;
      const snap = await this.repo.find(principal.organizationId, id);
      if (!snap) {
        throw new PaddockError('invalid_argument', `file-system snapshot ${id} not found`, {
          reason: 'CWSANDBOX_FSS_NOT_FOUND',
          violations: [{ field, rule: 'exists', description: 'a READY snapshot of this organization' }],
        });
      }
      if (snap.state !== 'SNAPSHOT_STATE_READY') {
        throw new PaddockError('failed_precondition', `file-system snapshot ${id} is ${snap.state}, not READY`, {
          reason: 'CWSANDBOX_FSS_NOT_READY',
          violations: [{ field, rule: 'ready', description: 'the snapshot must be READY' }],
        });
      }
    }
  }
}

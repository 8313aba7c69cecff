import { PaddockClient, type ClientOptions } from './client';
import { PaddockError, SandboxTimeoutError } from './errors';

/** A file-system snapshot (`GET /v1/fileSystemSnapshots/{id}`). */
export interface FileSystemSnapshot {
  fileSystemSnapshotId: string;
  state: 'SNAPSHOT_STATE_CREATING' | 'SNAPSHOT_STATE_READY' | 'SNAPSHOT_STATE_FAILED' | 'SNAPSHOT_STATE_DELETING';
  /** `CWSANDBOX_FSS_<...>: detail` when FAILED. */
  stateReason?: string;
  sizeBytes: number;
  sourceSandboxId: string;
  sourceVolumeName: string;
  trigger: 'SNAPSHOT_TRIGGER_MANUAL' | 'SNAPSHOT_TRIGGER_ON_DELETE';
  createTime: string;
  completeTime?: string;
  updatedAt: string;
  objectBucket: string;
  requestId?: string;
}

export interface SnapshotOptions extends ClientOptions {
  client?: PaddockClient;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const path = (id: string): string => `/v1/fileSystemSnapshots/${encodeURIComponent(id)}`;

/** The snapshot resource: get, list, delete, and waiting for a capture to finish. */
export const FileSystemSnapshots = {
  async get(id: string, opts: SnapshotOptions = {}): Promise<FileSystemSnapshot> {
    const client = opts.client ?? new PaddockClient(opts);
    return client.json<FileSystemSnapshot>('GET', path(id), { idempotent: true });
  },

  /** Every snapshot (of one source sandbox, with `sourceSandboxId`), newest first, all pages. */
  async list(opts: SnapshotOptions & { sourceSandboxId?: string } = {}): Promise<FileSystemSnapshot[]> {
    const client = opts.client ?? new PaddockClient(opts);
    const out: FileSystemSnapshot[] = [];
    let pageToken: string | undefined;
    do {
      const page = await client.json<{ fileSystemSnapshots: FileSystemSnapshot[]; nextPageToken: string }>('GET', '/v1/fileSystemSnapshots', {
        query: { pageSize: 100, pageToken, sourceSandboxId: opts.sourceSandboxId },
        idempotent: true,
      });
      out.push(...page.fileSystemSnapshots);
      pageToken = page.nextPageToken || undefined;
    } while (pageToken);
    return out;
  },

  async delete(id: string, opts: SnapshotOptions & { missingOk?: boolean } = {}): Promise<void> {
    const client = opts.client ?? new PaddockClient(opts);
    await client.json('DELETE', path(id), { query: { allowMissing: opts.missingOk ?? false }, idempotent: true });
  },

  /**
   * Waits until the snapshot is READY (returned) or FAILED (thrown, with its `CWSANDBOX_FSS_*`
   * reason); a timeout (default 10 min) throws `SandboxTimeoutError`.
   */
  async waitReady(id: string, opts: SnapshotOptions & { timeoutMs?: number } = {}): Promise<FileSystemSnapshot> {
    const client = opts.client ?? new PaddockClient(opts);
    const deadline = Date.now() + (opts.timeoutMs ?? 600_000);
    let interval = 50;
    for (;;) {
      const s = await FileSystemSnapshots.get(id, { client });
      if (s.state === 'SNAPSHOT_STATE_READY') return s;
      if (s.state !== 'SNAPSHOT_STATE_CREATING') {
        const reason = s.stateReason?.split(':')[0];
        throw new PaddockError('failed_precondition', `snapshot ${id} is ${s.state}: ${s.stateReason ?? 'no reason'}`, reason ? { reason } : {});
      }
      if (Date.now() > deadline) throw new SandboxTimeoutError('deadline_exceeded', `snapshot ${id} was not READY in time`);
      await sleep(interval);
      interval = Math.min(1000, interval * 1.5);
    }
  },
};

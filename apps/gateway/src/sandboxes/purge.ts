import { PaddockError, type ErrorCode } from '@paddock/contracts';
import { invalid } from './request-parsing';

/** `POST /v1/sandboxes:purge`, after validation. */
export interface PurgeRequest {
  /** Every tag must be on a sandbox (AND); absent with `purgeAll`. */
  tags?: string[];
  dryRun: boolean;
}

export interface PurgeResult {
  purgeCount: number;
  failedSandboxIds: string[];
  retryableFailedSandboxIds: string[];
}

/** Stops at most this many sandboxes at once: a purge must not flood the runners or the pool. */
const PURGE_CONCURRENCY = 8;
/** Failures worth retrying as they are (the runner or the database was briefly unreachable). */
const RETRYABLE: ReadonlySet<ErrorCode> = new Set(['unavailable', 'internal', 'deadline_exceeded', 'aborted', 'resource_exhausted']);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `tags` (AND) are required unless `purgeAll` is true, and the two exclude each other, so an
 * empty filter can never stop everything by accident. A non-empty `requestId` is reserved by the
 * API and unimplemented there too: retrying `failedSandboxIds` is the way to resume.
 */
export function parsePurgeRequest(body: unknown): PurgeRequest {
  const b = body === undefined || body === null ? {} : body;
  if (!isRecord(b)) throw invalid('the purge body must be a JSON object', [{ field: '(body)', rule: 'type', description: 'an object' }]);
  const known = new Set(['tags', 'dryRun', 'requestId', 'purgeAll']);
  const unknown = Object.keys(b).filter((k) => !known.has(k));
  if (unknown.length) {
    throw invalid(`unknown purge field ${unknown[0]}`, unknown.map((k) => ({ field: k, rule: 'unknown_field', description: 'tags, dryRun, requestId or purgeAll' })));
  }
  for (const k of ['dryRun', 'purgeAll'] as const) {
    if (b[k] !== undefined && typeof b[k] !== 'boolean') throw invalid(`${k} must be a boolean`, [{ field: k, rule: 'type', description: 'true or false' }]);
  }
  if (b.requestId !== undefined && typeof b.requestId !== 'string') throw invalid('requestId must be a string', [{ field: 'requestId', rule: 'type', description: 'a string' }]);
  if (typeof b.requestId === 'string' && b.requestId !== '') {
    throw new PaddockError('unimplemented', 'requestId on purge is reserved and not implemented; retry the failedSandboxIds of the previous answer instead');
  }
  const tags = b.tags;
  if (tags !== undefined && (!Array.isArray(tags) || !tags.every((t): t is string => typeof t === 'string' && t !== ''))) {
    throw invalid('tags must be a list of non-empty strings', [{ field: 'tags', rule: 'type', description: 'non-empty strings' }]);
  }
  const hasTags = Array.isArray(tags) && tags.length > 0;
  const purgeAll = b.purgeAll === true;
  if (hasTags && purgeAll) {
    throw invalid('tags and purgeAll exclude each other', [{ field: 'purgeAll', rule: 'mutually_exclusive', description: 'give tags, or purgeAll: true, not both' }]);
  }
  if (!hasTags && !purgeAll) {
    throw invalid('tags are required unless purgeAll is true', [{ field: 'tags', rule: 'required', description: 'at least one tag, or purgeAll: true to stop every sandbox' }]);
  }
  return { ...(hasTags ? { tags } : {}), dryRun: b.dryRun === true };
}

/**
 * Stops every matching live sandbox through `stop` (the ordinary delete, immediate), a few at a
 * time. `purgeCount` counts the sandboxes stopped (with `dryRun`, those that would be); each
 * failure is listed once, as retryable when retrying it as is may succeed.
 */
export async function purgeSandboxes(ids: string[], dryRun: boolean, stop: (id: string) => Promise<unknown>): Promise<PurgeResult> {
  if (dryRun) return { purgeCount: ids.length, failedSandboxIds: [], retryableFailedSandboxIds: [] };
  const out: PurgeResult = { purgeCount: 0, failedSandboxIds: [], retryableFailedSandboxIds: [] };
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < ids.length) {
      const id = ids[next++] as string;
      try {
        await stop(id);
        out.purgeCount++;
      } catch (e) {
        if (e instanceof PaddockError && !RETRYABLE.has(e.code)) out.failedSandboxIds.push(id);
        else out.retryableFailedSandboxIds.push(id);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PURGE_CONCURRENCY, ids.length) }, worker));
  return out;
}

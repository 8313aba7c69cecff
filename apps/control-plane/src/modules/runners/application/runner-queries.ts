import { Inject, Injectable } from '@nestjs/common';
import {
  MANAGED_RUNNERS_DEFAULT_PAGE_SIZE,
  MANAGED_RUNNERS_MAX_PAGE_SIZE,
  MANAGEMENT_MODES,
  PaddockError,
  RUNNER_CONNECTION_STATUSES,
  type ListManagedRunnersResponse,
  type ListRunnerRevisionsResponse,
  type ManagedRunner,
  type RunnerConnectionStatus,
  type StoredRunnerSpec,
} from '@paddock/contracts';
import { Clock } from '../../../infrastructure/tokens';
import { toLegacyRunner, toManagedRunner } from './runner-resource';
import { revisionHistory } from '../domain/revision-history';
import { filtersHash, PageTokenCodec } from '../projections/page-token';
import { RunnerReadRepository, type RunnerListFilters, type RunnerRow } from '../projections/runner-read.repository';
import { PAGE_TOKEN_SECRET } from '../runners.tokens';
import { asRunnerEvent, RunnerWriter } from './runner-writer';

export type QueryValue = string | string[] | undefined;
export type RawQuery = Record<string, QueryValue>;

/** The same body for a missing runner and another organization's runner (API-1). */
export function runnerNotFound(ref: string): PaddockError {
  return new PaddockError('not_found', `managed runner ${ref} not found`);
}

function single(query: RawQuery, name: string): string | undefined {
  const v = query[name];
  if (Array.isArray(v)) {
    throw new PaddockError('invalid_argument', `${name} must be given at most once`, {
      reason: 'PADDOCK_VALIDATION_FAILED',
      violations: [{ field: name, rule: 'single_value', description: `${name} was given ${v.length} times` }],
    });
  }
  return v === '' ? undefined : v;
}

function badQuery(field: string, rule: string, description: string): PaddockError {
  return new PaddockError('invalid_argument', description, { reason: 'PADDOCK_VALIDATION_FAILED', violations: [{ field, rule, description }] });
}

/** `CONNECTED` or `RUNNER_CONNECTION_STATUS_CONNECTED` (any case). */
function connectionStatusOf(v: string | undefined): RunnerConnectionStatus | undefined {
  if (v === undefined) return undefined;
  const up = v.toUpperCase();
  const full = up.startsWith('RUNNER_CONNECTION_STATUS_') ? up : `RUNNER_CONNECTION_STATUS_${up}`;
  const found = RUNNER_CONNECTION_STATUSES.find((s) => s === full);
  if (!found) {
    throw badQuery('connectionStatus', 'enum', `connectionStatus must be one of CONNECTED, DISCONNECTED (or their full names), got "${v.slice(0, 100)}"`);
  }
  return found;
}

function managementModeOf(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  const up = v.toUpperCase();
  const full = up.startsWith('MANAGEMENT_MODE_') ? up : `MANAGEMENT_MODE_${up}`;
  const found = MANAGEMENT_MODES.find((m) => m === full);
  if (!found) throw badQuery('managementMode', 'enum', `managementMode must be one of MANAGED, SELF_MANAGED (or their full names), got "${v.slice(0, 100)}"`);
  return found === 'MANAGEMENT_MODE_UNSPECIFIED' ? undefined : found;
}

/** pageSize: default 50; larger than 100 is coerced to 100; negative or non-integer is refused. */
export function pageSizeOf(v: string | undefined): number {
  if (v === undefined) return MANAGED_RUNNERS_DEFAULT_PAGE_SIZE;
  if (!/^\d{1,12}$/.test(v)) throw badQuery('pageSize', 'non_negative_integer', `pageSize must be a non-negative integer, got "${v.slice(0, 100)}"`);
  const n = Number(v);
  if (n === 0) return MANAGED_RUNNERS_DEFAULT_PAGE_SIZE;
  return Math.min(n, MANAGED_RUNNERS_MAX_PAGE_SIZE);
}

/** Reads of the runners module: projections only, org-scoped in the repository. */
@Injectable()
export class RunnerQueries {
  private readonly tokens: PageTokenCodec;

  constructor(
    private readonly repo: RunnerReadRepository,
    private readonly writer: RunnerWriter,
    private readonly clock: Clock,
    @Inject(PAGE_TOKEN_SECRET) secret: string,
  ) {
    this.tokens = new PageTokenCodec(secret);
  }

  async rowOf(organizationId: string, ref: string): Promise<RunnerRow> {
    const row = await this.repo.findByRef(organizationId, ref);
    if (!row) throw runnerNotFound(ref);
    return row;
  }

  async views(rows: RunnerRow[]): Promise<ManagedRunner[]> {
    const latest = await this.repo.latestRevisions(rows.map((r) => (r.spec as StoredRunnerSpec).releaseChannel));
    return rows.map((r) => toManagedRunner(r, latest.get((r.spec as StoredRunnerSpec).releaseChannel) ?? 0));
  }

  /** ONE query: the row and its channel's latest release revision. */
  async get(organizationId: string, ref: string): Promise<ManagedRunner> {
    const row = await this.repo.findByRefWithLatest(organizationId, ref);
    if (!row) throw runnerNotFound(ref);
    return toManagedRunner(row, row.latest_revision);
  }

  async getByUid(uid: string): Promise<ManagedRunner | undefined> {
    const row = await this.repo.findByUidWithLatest(uid);
    return row ? toManagedRunner(row, row.latest_revision) : undefined;
  }

  async getLegacy(organizationId: string, ref: string): Promise<Record<string, unknown>> {
    const row = await this.repo.findByRefWithLatest(organizationId, ref);
    if (!row) throw runnerNotFound(ref);
    return toLegacyRunner(row, row.latest_revision);
  }

  async list(organizationId: string, query: RawQuery): Promise<ListManagedRunnersResponse> {
    const filters: RunnerListFilters = {};
    const zone = single(query, 'zone');
    const clusterId = single(query, 'clusterId');
    const connectionStatus = connectionStatusOf(single(query, 'connectionStatus'));
    const runnerId = single(query, 'runnerId');
    const managementMode = managementModeOf(single(query, 'managementMode'));
    if (zone !== undefined) filters.zone = zone;
    if (clusterId !== undefined) filters.clusterId = clusterId;
    if (connectionStatus !== undefined) filters.connectionStatus = connectionStatus;
    if (runnerId !== undefined) filters.runnerId = runnerId;
    if (managementMode !== undefined) filters.managementMode = managementMode;
    const pageSize = pageSizeOf(single(query, 'pageSize'));
    const hash = filtersHash({ ...filters });
    const now = this.clock.now();
    const token = single(query, 'pageToken');
    const after = token === undefined ? undefined : this.tokens.decode(token, organizationId, hash, now);

    const rows = await this.repo.listPage(organizationId, filters, pageSize, after);
    const page = rows.slice(0, pageSize);
    const last = page[page.length - 1];
    const nextPageToken = rows.length > pageSize && last ? this.tokens.encode(organizationId, hash, { createTime: last.create_time_text, uid: last.uid }, now) : '';
    return { managedRunners: await this.views(page), nextPageToken };
  }

  async revisions(organizationId: string, ref: string): Promise<ListRunnerRevisionsResponse> {
    const row = await this.rowOf(organizationId, ref);
    const events = await this.writer.readStream(row.uid);
    return {
      revisions: revisionHistory(
        events.map((e) => ({
          event: asRunnerEvent(e),
          streamPosition: e.streamPosition,
          actor: e.metadata.actor,
          // The app clock's time (metadata.at) is what the rest of the resource shows; the row's
          // insert time is the fallback for events written without it.
          createdAt: typeof e.metadata.at === 'string' ? new Date(e.metadata.at) : e.createdAt,
        })),
      ),
    };
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely, type Selectable } from 'kysely';
import { precompile } from '@paddock/event-store';
import type { MaintenancePolicy, ReleaseChannel, RunnerConnectionStatus, StoredRunnerSpec, WarmPoolStatus } from '@paddock/contracts';
import { KYSELY } from '../../../infrastructure/tokens';
import { ReleaseCatalog } from '../../releases';
import type { RunnersTable, RunnersTables } from '../runners.tables';
import type { PageCursor } from './page-token';

export type RunnerRow = Selectable<RunnersTable> & { create_time_text: string };

/** A runner row with the newest release revision of its channel (0 when none is published). */
export type RunnerRowWithLatest = RunnerRow & { latest_revision: number };

/**
 * Newest release revision on the row's channel, computed in the row's own query so a GET is ONE
 * round trip and never serves a stale catalogue. UNSPECIFIED means STABLE, as in
 * `ReleaseCatalog.latest`. Backed by the catalogue's (channel, ...) index; a max over a handful of rows.
 */
export const LATEST_REVISION = sql<number>`coalesce((
  SELECT max(r.revision) FROM cp_releases r
   WHERE r.channel = CASE WHEN cp_runners.spec->>'releaseChannel' = 'RELEASE_CHANNEL_UNSPECIFIED'
                          THEN 'RELEASE_CHANNEL_STABLE' ELSE cp_runners.spec->>'releaseChannel' END), 0)::int`;

export interface RunnerConnectionState {
  organizationId: string;
  runnerId: string;
  connectionStatus: RunnerConnectionStatus;
  lastHeartbeatTime: Date | null;
}

export interface RunnerMaintenanceCandidate {
  organizationId: string;
  runnerId: string;
  releaseChannel: ReleaseChannel;
  maintenancePolicy: MaintenancePolicy;
  targetRevision: number;
  activeRevision: number;
  updateAvailable: boolean;
}

/** List filters after normalization (enum names in full). */
export interface RunnerListFilters {
  zone?: string;
  clusterId?: string;
  connectionStatus?: RunnerConnectionStatus;
  runnerId?: string;
  managementMode?: string;
}

/** A row with its channel's latest revision; the lookups below only add a WHERE (and a lock). */
function withLatest(db: Kysely<RunnersTables>) {
  return db
    .selectFrom('cp_runners')
    .selectAll()
    .select(sql<string>`create_time::text`.as('create_time_text'))
    .select(LATEST_REVISION.as('latest_revision'));
}

/** Each lookup shape, precompiled (the writers lock the row in their write statement instead). */
function runnerLookups(db: Kysely<RunnersTables>) {
  return {
    byRunnerId: precompile((org: string, runnerId: string) => withLatest(db).where('organization_id', '=', org).where('runner_id', '=', runnerId), 2),
    // A runner id wins over another runner's uid.
    byRunnerIdOrUid: precompile(
      (org: string, ref: string, uid: string) =>
        withLatest(db)
          .where('organization_id', '=', org)
          .where((eb) => eb.or([eb('runner_id', '=', ref), eb('uid', '=', uid)]))
          .orderBy(sql`(runner_id = ${ref}) DESC`)
          .limit(1),
      3,
    ),
    byUid: precompile((uid: string) => withLatest(db).where('uid', '=', uid), 1),
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Queries over `cp_runners`. Every read a caller can reach is scoped by organization here, in the
 * repository, so a handler cannot forget it (API-1). The intake-facing methods are cross-org by
 * design (they serve the control plane itself).
 */
@Injectable()
export class RunnerReadRepository {
  /** The single-row lookups of every GET and every write, compiled once (see `precompile`). */
  private readonly lookups: ReturnType<typeof runnerLookups>;

  constructor(
    @Inject(KYSELY) private readonly db: Kysely<RunnersTables>,
    private readonly releases: ReleaseCatalog,
  ) {
    this.lookups = runnerLookups(db);
  }

  private base() {
    return this.db.selectFrom('cp_runners').selectAll().select(sql<string>`create_time::text`.as('create_time_text'));
  }

  /** By the operator-assigned runner id, else by the server uid. */
  async findByRef(organizationId: string, ref: string): Promise<RunnerRow | undefined> {
    return this.findByRefWithLatest(organizationId, ref);
  }

  /**
   * ONE query: the row by runner id, else by uid (a runner id wins over another runner's uid, as
   * the former two-step lookup did), with its channel's latest release revision.
   */
  async findByRefWithLatest(organizationId: string, ref: string): Promise<RunnerRowWithLatest | undefined> {
    const q = UUID.test(ref) ? this.lookups.byRunnerIdOrUid(organizationId, ref, ref.toLowerCase()) : this.lookups.byRunnerId(organizationId, ref);
    return (await this.db.executeQuery(q)).rows[0];
  }

  /** ONE query: the row by uid (cross-org; for the writers) with its channel's latest revision. */
  async findByUidWithLatest(uid: string): Promise<RunnerRowWithLatest | undefined> {
    const q = this.lookups.byUid(uid);
    return (await this.db.executeQuery(q)).rows[0];
  }

  async findByUid(uid: string): Promise<RunnerRow | undefined> {
    return this.base().where('uid', '=', uid).executeTakeFirst();
  }

  /** One page in (create_time, uid) order, keyset after `after`; returns up to `limit + 1` rows. */
  async listPage(organizationId: string, filters: RunnerListFilters, limit: number, after: PageCursor | undefined): Promise<RunnerRow[]> {
    let q = this.base().where('organization_id', '=', organizationId);
    if (filters.zone !== undefined) q = q.where('zone', '=', filters.zone);
    if (filters.clusterId !== undefined) {
      const c = filters.clusterId;
      // Older runners may carry a cluster name where the id belongs; the filter accepts either.
      q = q.where((eb) => eb.or([eb('cluster_id', '=', c), eb('cluster_name', '=', c)]));
    }
    if (filters.connectionStatus !== undefined) q = q.where('connection_status', '=', filters.connectionStatus);
    if (filters.runnerId !== undefined) q = q.where('runner_id', '=', filters.runnerId);
    // Every v1 runner is managed; a self-managed filter matches nothing.
    if (filters.managementMode === 'MANAGEMENT_MODE_SELF_MANAGED') q = q.where(sql<boolean>`false`);
    if (after) q = q.where(sql<boolean>`(create_time, uid) > (${after.createTime}::timestamptz, ${after.uid}::uuid)`);
    return q.orderBy('create_time').orderBy('uid').limit(limit + 1).execute();
  }

  /** Newest release revision per channel, for `updateAvailable`. */
  async latestRevisions(channels: Iterable<string>): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const channel of new Set(channels)) {
      try {
        out.set(channel, (await this.releases.latest(channel as ReleaseChannel)).revision);
      } catch {
        // No release published on the channel yet: nothing to update to.
        out.set(channel, 0);
      }
    }
    return out;
  }

  /** Heartbeat bookkeeping (not an event). False when no such runner exists. */
  async touchHeartbeat(
    organizationId: string,
    runnerId: string,
    at: Date,
    observed: { revision: number; policyEtag: string | null; usingDefaultPolicy: boolean; warmPoolStatus?: WarmPoolStatus[] },
  ): Promise<boolean> {
    const r = await this.db
      .updateTable('cp_runners')
      .set({
        last_heartbeat_time: at,
        observed_revision: observed.revision,
        observed_policy_etag: observed.policyEtag,
        observed_using_default_policy: observed.usingDefaultPolicy,
        observed_warm_pool_status: JSON.stringify(observed.warmPoolStatus ?? []),
      })
      .where('organization_id', '=', organizationId)
      .where('runner_id', '=', runnerId)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async listConnectionStates(): Promise<RunnerConnectionState[]> {
    const rows = await this.db
      .selectFrom('cp_runners')
      .select(['organization_id', 'runner_id', 'connection_status', 'last_heartbeat_time'])
      .execute();
    return rows.map((r) => ({
      organizationId: r.organization_id,
      runnerId: r.runner_id,
      connectionStatus: r.connection_status as RunnerConnectionStatus,
      lastHeartbeatTime: r.last_heartbeat_time,
    }));
  }

  /** Live (not deleting) runners with what the maintenance scheduler needs. */
  async listForMaintenance(): Promise<RunnerMaintenanceCandidate[]> {
    const rows = await this.db
      .selectFrom('cp_runners')
      .select(['organization_id', 'runner_id', 'spec', 'target_revision', 'active_revision'])
      .where('install_status', '!=', 'RUNNER_INSTALL_STATUS_DELETING')
      .execute();
    const specs = rows.map((r) => r.spec as StoredRunnerSpec);
    const latest = await this.latestRevisions(specs.map((s) => s.releaseChannel));
    return rows.map((r, i) => {
      const spec = specs[i] as StoredRunnerSpec;
      return {
        organizationId: r.organization_id,
        runnerId: r.runner_id,
        releaseChannel: spec.releaseChannel,
        maintenancePolicy: spec.maintenancePolicy,
        targetRevision: r.target_revision,
        activeRevision: r.active_revision,
        updateAvailable: (latest.get(spec.releaseChannel) ?? 0) > r.target_revision,
      };
    });
  }
}

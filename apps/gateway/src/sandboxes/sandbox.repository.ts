import { sql, type Kysely } from 'kysely';
import { PaddockError, SANDBOX_STATE_RANK, TERMINAL_SANDBOX_STATE_RANK, TERMINAL_SANDBOX_STATES, type ContainerStatusView, type SandboxState, type SandboxStateReason } from '@paddock/contracts';
import type { GatewayDatabase, PlacementRecord } from '../db/database';
import type { SandboxRouteCache } from './sandbox-route-cache';
import type { SandboxChangeListener } from './change-broadcast';
import { isTerminalRow, type SandboxRow } from './sandbox-view';

const TERMINAL = TERMINAL_SANDBOX_STATES;
const TERMINAL_SQL_LIST = sql.raw(TERMINAL_SANDBOX_STATES.map((st) => `'${st}'`).join(', '));

/**
 * SQL rank of the stored state, written out from the contract's table (a state missing from it
 * ranks NULL, which no comparison passes: an unknown stored state is never overwritten).
 */
const rankOfState = sql<number>`(CASE state ${sql.raw(
  Object.entries(SANDBOX_STATE_RANK)
    .map(([state, rank]) => `WHEN '${state}' THEN ${rank}`)
    .join(' '),
)} END)`;

export interface NewSandboxRow {
  id: string;
  organizationId: string;
  requestId: string | null;
  requestFingerprint: string;
  spec: unknown;
  tags: string[];
  runnerId: string;
  runnerGroupId: string;
  placement: PlacementRecord;
  now: Date;
}

/** News about a sandbox from its runner (a state event, a create/get/list reply). */
export interface RunnerObservation {
  state: SandboxState;
  rank: number;
  reason?: SandboxStateReason;
  message?: string;
  exitCode?: number;
  /** Event sequence; replies without one pass 0 and rely on the rank alone. */
  sequence: number;
  at: Date;
  effective?: Record<string, unknown>;
  /** A state event's containers: merged into the stored status echoes (an event carries no other echo). */
  containerStatuses?: ContainerStatusView[];
}

export interface ListFilter {
  tags?: string[];
  states?: string[];
  runnerIds?: string[];
  showTerminated: boolean;
  pageSize: number;
  after?: { createTime: Date; id: string };
}

/**
 * Every query of the gateway's sandboxes. Reads and user-driven writes take the caller's
 * organization and filter by it here (never in handlers), so a foreign id is simply not found.
 * Every write that can take a sandbox out of the live set also retires it from the route cache,
 * here, so no caller can forget to; every write that moves a sandbox's state wakes its long polls
 * (`waiters`), here too.
 */
export class SandboxRepository {
  constructor(
    private readonly db: Kysely<GatewayDatabase>,
    private readonly routes?: SandboxRouteCache,
    private readonly waiters?: SandboxChangeListener,
  ) {}

  /** Inserts the PENDING row; with a requestId already used, returns the existing row instead. */
  async insertPending(n: NewSandboxRow): Promise<{ row: SandboxRow; created: boolean }> {
    const inserted = await this.db
      .insertInto('gw_sandboxes')
      .values({
        id: n.id,
        organization_id: n.organizationId,
        request_id: n.requestId,
        request_fingerprint: n.requestFingerprint,
        spec: JSON.stringify(n.spec),
        tags: n.tags,
        state: 'STATE_PENDING',
        runner_id: n.runnerId,
        runner_group_id: n.runnerGroupId,
        placement: JSON.stringify(n.placement),
        create_time: n.now,
        updated_at: n.now,
      })
      .onConflict((oc) => oc.columns(['organization_id', 'request_id']).where('request_id', 'is not', null).doNothing())
      .returningAll()
      .executeTakeFirst();
    if (inserted) return { row: inserted, created: true };
    const existing = n.requestId ? await this.findByRequestId(n.organizationId, n.requestId) : undefined;
    if (!existing) throw new PaddockError('internal', 'sandbox insert conflicted but no row was found');
    return { row: existing, created: false };
  }

  findByRequestId(organizationId: string, requestId: string): Promise<SandboxRow | undefined> {
    return this.db
      .selectFrom('gw_sandboxes')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('request_id', '=', requestId)
      .executeTakeFirst();
  }

  findById(organizationId: string, id: string): Promise<SandboxRow | undefined> {
    return this.db.selectFrom('gw_sandboxes').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  }

  /** Internal (reconciler, events): not org-scoped. */
  findAnyById(id: string): Promise<SandboxRow | undefined> {
    return this.db.selectFrom('gw_sandboxes').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async list(organizationId: string, f: ListFilter): Promise<SandboxRow[]> {
    let q = this.db.selectFrom('gw_sandboxes').selectAll().where('organization_id', '=', organizationId);
    if (f.tags?.length) q = q.where('tags', '@>', sql<string[]>`${f.tags}::text[]`);
    if (f.states?.length) q = q.where('state', 'in', f.states);
    else if (!f.showTerminated) q = q.where('state', 'not in', TERMINAL);
    if (f.runnerIds?.length) q = q.where('runner_id', 'in', f.runnerIds);
    if (f.after) {
      const { createTime, id } = f.after;
      q = q.where((eb) => eb.or([eb('create_time', '>', createTime), eb.and([eb('create_time', '=', createTime), eb('id', '>', id)])]));
    }
    return q.orderBy('create_time').orderBy('id').limit(f.pageSize + 1).execute();
  }

  /** Ids of the organization's sandboxes that have not ended, carrying every tag in `tags` (all when absent). */
  async liveIds(organizationId: string, tags: string[] | undefined): Promise<string[]> {
    let q = this.db.selectFrom('gw_sandboxes').select('id').where('organization_id', '=', organizationId).where('state', 'not in', TERMINAL);
    if (tags?.length) q = q.where('tags', '@>', sql<string[]>`${tags}::text[]`);
    return (await q.orderBy('create_time').orderBy('id').execute()).map((r) => r.id);
  }

  /** The organization's live sandboxes on these runners, oldest first (what holds their capacity). */
  async liveOnRunners(organizationId: string, runnerIds: string[]): Promise<{ id: string; runner_id: string; create_time: Date }[]> {
    if (runnerIds.length === 0) return [];
    return this.db
      .selectFrom('gw_sandboxes')
      .select(['id', 'runner_id', 'create_time'])
      .where('organization_id', '=', organizationId)
      .where('runner_id', 'in', runnerIds)
      .where('state', 'not in', TERMINAL)
      .orderBy('create_time')
      .orderBy('id')
      .execute();
  }

  /** Moves a not-yet-acknowledged PENDING row to the next runner of its placement. */
  async reassign(id: string, fromRunner: string, toRunner: string, runnerGroupId: string, placement: PlacementRecord, now: Date): Promise<boolean> {
    const r = await this.db
      .updateTable('gw_sandboxes')
      .set({ runner_id: toRunner, runner_group_id: runnerGroupId, placement: JSON.stringify(placement), updated_at: now })
      .where('id', '=', id)
      .where('runner_id', '=', fromRunner)
      .where('state', '=', 'STATE_PENDING')
      .where('runner_acknowledged', '=', false)
      .executeTakeFirst();
    // Never cached (unacknowledged); dropped anyway so a cache entry can never outlive a move.
    this.routes?.invalidate(id);
    return r.numUpdatedRows > 0n;
  }

  async recordPlacement(id: string, placement: PlacementRecord, now: Date): Promise<void> {
    await this.db.updateTable('gw_sandboxes').set({ placement: JSON.stringify(placement), updated_at: now }).where('id', '=', id).execute();
  }

  async noteCreateAttempt(id: string, now: Date): Promise<void> {
    await this.db
      .updateTable('gw_sandboxes')
      .set((eb) => ({ create_attempts: eb('create_attempts', '+', 1), updated_at: now }))
      .where('id', '=', id)
      .execute();
  }

  /**
   * Applies what the owning runner reports. Ignored when it comes from a runner that no longer
   * owns the row, when the row is already terminal, or when it would move the state backwards.
   */
  async applyObservation(id: string, runnerId: string, o: RunnerObservation, acknowledged = true): Promise<boolean> {
    const terminal = o.rank >= TERMINAL_SANDBOX_STATE_RANK;
    // Before the write when the cache knows this runner owns it (no request is routed on it
    // meanwhile), after it when applied (that proves ownership and beats any read in flight).
    if (terminal) this.routes?.retireIfOwnedBy(id, runnerId);
    const r = await this.db
      .updateTable('gw_sandboxes')
      .set({
        state: o.state,
        state_sequence: sql<number>`GREATEST(state_sequence, ${o.sequence})`,
        runner_acknowledged: acknowledged ? true : sql<boolean>`runner_acknowledged`,
        updated_at: new Date(),
        // A resumed sandbox drops the reason it was paused for.
        ...(o.reason !== undefined ? { state_reason: o.reason } : o.state === 'STATE_RUNNING' ? { state_reason: null } : {}),
        ...(o.message !== undefined ? { message: o.message } : {}),
        ...(o.exitCode !== undefined ? { exit_code: o.exitCode } : {}),
        ...(o.effective ? { effective: JSON.stringify(o.effective) } : {}),
        ...(o.containerStatuses && !o.effective
          ? { effective: sql`COALESCE(effective, '{}'::jsonb) || ${JSON.stringify({ containerStatuses: o.containerStatuses })}::jsonb` }
          : {}),
        ...(o.state === 'STATE_RUNNING' ? { start_time: sql<Date>`COALESCE(start_time, ${o.at})` } : {}),
        ...(terminal ? { end_time: sql<Date>`COALESCE(end_time, ${o.at})` } : {}),
      })
      .where('id', '=', id)
      .where('runner_id', '=', runnerId)
      .where('state', 'not in', TERMINAL)
      .where((eb) =>
        eb.or([
          eb(rankOfState, '<', o.rank),
          // Same rank: the same state again, or RUNNING ⇄ PAUSED; the newer event wins.
          eb.and([eb(rankOfState, '=', o.rank), eb('state_sequence', '<', o.sequence)]),
        ]),
      )
      .executeTakeFirst();
    const applied = r.numUpdatedRows > 0n;
    if (terminal && applied) this.routes?.retire(id);
    if (applied) this.waiters?.notify(id);
    return applied;
  }

  /**
   * The winning runner accepted the create: records the placement, marks the row acknowledged
   * and applies the runner's view, in one statement (the create path's second commit).
   * SET expressions see the old row, so `newer` is evaluated once, consistently.
   */
  async acceptPlacement(id: string, runnerId: string, placement: PlacementRecord, o: RunnerObservation, now: Date): Promise<SandboxRow | undefined> {
    if (o.rank >= TERMINAL_SANDBOX_STATE_RANK) this.routes?.retireIfOwnedBy(id, runnerId);
    const newer = sql<boolean>`(state NOT IN (${TERMINAL_SQL_LIST}) AND (${rankOfState} < ${o.rank} OR (${rankOfState} = ${o.rank} AND state_sequence < ${o.sequence})))`;
    const ifNewer = <T>(value: unknown, column: string) => sql<T>`CASE WHEN ${newer} THEN ${value} ELSE ${sql.ref(column)} END`;
    const row = await this.db
      .updateTable('gw_sandboxes')
      .set({
        placement: JSON.stringify(placement),
        runner_acknowledged: true,
        updated_at: now,
        state: ifNewer<string>(o.state, 'state'),
        state_sequence: sql<number>`GREATEST(state_sequence, ${o.sequence})`,
        ...(o.reason !== undefined ? { state_reason: ifNewer<string>(o.reason, 'state_reason') } : {}),
        ...(o.message !== undefined ? { message: ifNewer<string>(o.message, 'message') } : {}),
        ...(o.exitCode !== undefined ? { exit_code: ifNewer<number>(o.exitCode, 'exit_code') } : {}),
        // The resolution echoes are fixed at launch: kept even when the state event won the race.
        ...(o.effective ? { effective: sql`CASE WHEN ${newer} OR effective IS NULL THEN ${JSON.stringify(o.effective)}::jsonb ELSE effective END` } : {}),
        ...(o.state === 'STATE_RUNNING' ? { start_time: sql<Date>`COALESCE(start_time, ${o.at})` } : {}),
        ...(o.rank >= TERMINAL_SANDBOX_STATE_RANK ? { end_time: sql<Date>`COALESCE(end_time, ${o.at})` } : {}),
      })
      .where('id', '=', id)
      .where('runner_id', '=', runnerId)
      .returningAll()
      .executeTakeFirst();
    if (row && isTerminalRow(row)) this.routes?.retire(id);
    else if (row) this.routes?.remember(row);
    if (row) this.waiters?.notify(id);
    return row;
  }

  async markAcknowledged(id: string, runnerId: string): Promise<void> {
    await this.db.updateTable('gw_sandboxes').set({ runner_acknowledged: true }).where('id', '=', id).where('runner_id', '=', runnerId).execute();
  }

  /** DeleteSandboxLogs done: the first time is kept (the call is idempotent). */
  async markLogsDeleted(organizationId: string, id: string, now: Date): Promise<void> {
    await this.db
      .updateTable('gw_sandboxes')
      .set({ logs_deleted_at: sql<Date>`COALESCE(logs_deleted_at, ${now})`, updated_at: now })
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .execute();
  }

  async markDeleteRequested(organizationId: string, id: string, graceSeconds: number, now: Date): Promise<SandboxRow | undefined> {
    const row = await this.db
      .updateTable('gw_sandboxes')
      .set({ delete_requested_at: sql<Date>`COALESCE(delete_requested_at, ${now})`, delete_grace_seconds: graceSeconds, updated_at: now })
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    // After the write and only for the owner organization: another organization's DELETE of this
    // id found no row and must not change how the owner's requests are served.
    if (row) this.routes?.retire(id);
    return row;
  }

  /** Non-terminal rows nobody touched since `before`: the reconciler's work list. */
  stuck(before: Date, limit: number): Promise<SandboxRow[]> {
    return this.db
      .selectFrom('gw_sandboxes')
      .selectAll()
      .where('state', 'not in', TERMINAL)
      .where('updated_at', '<', before)
      .where((eb) => eb.or([eb('state', '!=', 'STATE_RUNNING'), eb('runner_acknowledged', '=', false), eb('delete_requested_at', 'is not', null)]))
      .orderBy('updated_at')
      .limit(limit)
      .execute();
  }

  /** Non-terminal rows owned by a runner. */
  activeOnRunner(runnerId: string): Promise<SandboxRow[]> {
    return this.db.selectFrom('gw_sandboxes').selectAll().where('runner_id', '=', runnerId).where('state', 'not in', TERMINAL).execute();
  }

  /** Ids (of those given) whose row exists, is owned by `runnerId` and is not terminal. */
  async ownedActive(runnerId: string, ids: string[]): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const rows = await this.db
      .selectFrom('gw_sandboxes')
      .select('id')
      .where('id', 'in', ids)
      .where('runner_id', '=', runnerId)
      .where('state', 'not in', TERMINAL)
      .execute();
    return new Set(rows.map((r) => r.id));
  }

  /** Ends a non-terminal row in a terminal state with a reason. */
  async markTerminal(id: string, state: 'STATE_COMPLETED' | 'STATE_FAILED', reason: SandboxStateReason, message: string, now: Date, onlyRunner?: string): Promise<boolean> {
    if (onlyRunner) this.routes?.retireIfOwnedBy(id, onlyRunner);
    else this.routes?.retire(id);
    let q = this.db
      .updateTable('gw_sandboxes')
      .set({ state, state_reason: reason, message, end_time: now, updated_at: now })
      .where('id', '=', id)
      .where('state', 'not in', TERMINAL);
    if (onlyRunner) q = q.where('runner_id', '=', onlyRunner);
    const r = await q.executeTakeFirst();
    const updated = r.numUpdatedRows > 0n;
    if (updated) this.routes?.retire(id);
    if (updated) this.waiters?.notify(id);
    return updated;
  }

  async runnersWithActiveSandboxes(): Promise<string[]> {
    const rows = await this.db.selectFrom('gw_sandboxes').select('runner_id').distinct().where('state', 'not in', TERMINAL).execute();
    return rows.map((r) => r.runner_id);
  }

  /** Removes a row no runner ever acknowledged (every runner refused it for certain). */
  async deleteUnacknowledged(id: string): Promise<void> {
    this.routes?.invalidate(id);
    await this.db.deleteFrom('gw_sandboxes').where('id', '=', id).where('runner_acknowledged', '=', false).execute();
    this.waiters?.notify(id);
  }

  /** Touches a row so the reconciler leaves it alone for another period. */
  async touch(id: string, now: Date): Promise<void> {
    await this.db.updateTable('gw_sandboxes').set({ updated_at: now }).where('id', '=', id).execute();
  }
}

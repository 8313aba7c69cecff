import { sql, type Kysely } from 'kysely';
import {
  PaddockError,
  SANDBOX_STATE_RANK,
  TERMINAL_SANDBOX_STATE_RANK,
  TERMINAL_SANDBOX_STATES,
  type ContainerStatusView,
  type SandboxState,
  type SandboxStateReason,
} from '@paddock/contracts';
import type { GatewayDatabase, GwSandboxesTable, PlacementRecord } from '../db/database';
import type { SandboxRouteCache } from './sandbox-route-cache';
import type { SandboxChangeListener } from './change-broadcast';
import { isTerminalRow, type SandboxRow } from './sandbox-view';
import { GroupCommit } from '../db/group-commit';
import { PreparedBatch, type PreparedBatchSpec } from '../db/prepared-batch';

const TERMINAL = TERMINAL_SANDBOX_STATES;

/**
 * Every column of a sandbox row, named: what the prepared statements of the create path return
 * (see PreparedBatch: a prepared `RETURNING *` may fail once a migration adds a column).
 */
const SANDBOX_COLUMN_SET = {
  id: true,
  organization_id: true,
  request_id: true,
  request_fingerprint: true,
  spec: true,
  tags: true,
  state: true,
  state_reason: true,
  message: true,
  exit_code: true,
  state_sequence: true,
  runner_id: true,
  runner_group_id: true,
  placement: true,
  effective: true,
  create_attempts: true,
  runner_acknowledged: true,
  delete_requested_at: true,
  delete_grace_seconds: true,
  create_time: true,
  start_time: true,
  end_time: true,
  updated_at: true,
  logs_deleted_at: true,
} satisfies Record<keyof GwSandboxesTable, true>;
const SANDBOX_COLUMN_NAMES = Object.keys(SANDBOX_COLUMN_SET);
const SANDBOX_COLUMNS = sql.raw(SANDBOX_COLUMN_NAMES.join(', '));
const SANDBOX_COLUMNS_OF_S = sql.raw(SANDBOX_COLUMN_NAMES.map((c) => `s.${c}`).join(', '));
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

/** An acceptPlacement call waiting for its statement. */
interface Acceptance {
  id: string;
  runnerId: string;
  placement: PlacementRecord;
  o: RunnerObservation;
  now: Date;
}

/** An applyObservation call waiting for its statement. */
interface Observed {
  id: string;
  runnerId: string;
  o: RunnerObservation;
  acknowledged: boolean;
  now: Date;
}

/** The create's first commit: PENDING rows (a requestId already used inserts nothing). */
const INSERT_PENDING: PreparedBatchSpec<NewSandboxRow> = {
  name: 'gw_insert_pending',
  width: 12,
  values: (n) => [
    n.id,
    n.organizationId,
    n.requestId,
    n.requestFingerprint,
    JSON.stringify(n.spec),
    n.tags,
    'STATE_PENDING',
    n.runnerId,
    n.runnerGroupId,
    JSON.stringify(n.placement),
    n.now,
    n.now,
  ],
  sql: (rows) => sql`
    INSERT INTO gw_sandboxes (id, organization_id, request_id, request_fingerprint, spec, tags, state, runner_id, runner_group_id, placement, create_time, updated_at)
    VALUES ${sql.join(rows.map((r) => sql`(${sql.join(r)})`))}
    ON CONFLICT (organization_id, request_id) WHERE request_id IS NOT NULL DO NOTHING
    RETURNING ${SANDBOX_COLUMNS}`,
};

/**
 * The accept (the create's second commit). SET expressions see the old row, so `newer` is
 * evaluated once per row, consistently. The resolution echoes (`effective`) are fixed at launch:
 * kept even when a state event won the race.
 */
const ACCEPT_PLACEMENT: PreparedBatchSpec<Acceptance> = {
  name: 'gw_accept_placement',
  width: 12,
  values: ({ id, runnerId, placement, o, now }) => [
    id,
    runnerId,
    JSON.stringify(placement),
    o.state,
    o.rank,
    o.sequence,
    o.reason ?? null,
    o.message ?? null,
    o.exitCode ?? null,
    o.effective ? JSON.stringify(o.effective) : null,
    o.at,
    now,
  ],
  sql: (rows) => {
    const values = sql.join(
      rows.map(
        ([id, runnerId, placement, state, rank, seq, reason, message, exit, effective, at, now]) =>
          sql`(${id}::text, ${runnerId}::text, ${placement}::jsonb, ${state}::text, ${rank}::int, ${seq}::int8, ${reason}::text, ${message}::text, ${exit}::int, ${effective}::jsonb, ${at}::timestamptz, ${now}::timestamptz)`,
      ),
    );
    const newer = sql`(s.state NOT IN (${TERMINAL_SQL_LIST}) AND (${rankOfState} < v.v_rank OR (${rankOfState} = v.v_rank AND s.state_sequence < v.v_seq)))`;
    return sql`
    UPDATE gw_sandboxes AS s SET
      placement = v.v_placement,
      runner_acknowledged = true,
      updated_at = v.v_now,
      state = CASE WHEN ${newer} THEN v.v_state ELSE s.state END,
      state_sequence = GREATEST(s.state_sequence, v.v_seq),
      state_reason = CASE WHEN v.v_reason IS NOT NULL AND ${newer} THEN v.v_reason ELSE s.state_reason END,
      message = CASE WHEN v.v_message IS NOT NULL AND ${newer} THEN v.v_message ELSE s.message END,
      exit_code = CASE WHEN v.v_exit IS NOT NULL AND ${newer} THEN v.v_exit ELSE s.exit_code END,
      effective = CASE WHEN v.v_effective IS NOT NULL AND (${newer} OR s.effective IS NULL) THEN v.v_effective ELSE s.effective END,
      start_time = CASE WHEN v.v_state = 'STATE_RUNNING' THEN COALESCE(s.start_time, v.v_at) ELSE s.start_time END,
      end_time = CASE WHEN v.v_rank >= ${TERMINAL_SANDBOX_STATE_RANK} THEN COALESCE(s.end_time, v.v_at) ELSE s.end_time END
    FROM (VALUES ${values}) AS v(v_id, v_runner, v_placement, v_state, v_rank, v_seq, v_reason, v_message, v_exit, v_effective, v_at, v_now)
    WHERE s.id = v.v_id AND s.runner_id = v.v_runner
    RETURNING ${SANDBOX_COLUMNS_OF_S}`;
  },
};

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
  private readonly insertStatement: PreparedBatch<NewSandboxRow>;
  private readonly acceptStatement: PreparedBatch<Acceptance>;

  constructor(
    private readonly db: Kysely<GatewayDatabase>,
    private readonly routes?: SandboxRouteCache,
    private readonly waiters?: SandboxChangeListener,
  ) {
    this.insertStatement = new PreparedBatch(db, INSERT_PENDING);
    this.acceptStatement = new PreparedBatch(db, ACCEPT_PLACEMENT);
  }

  private readonly inserts = new GroupCommit<NewSandboxRow, SandboxRow | undefined>({
    many: (ns) => this.insertRows(ns),
    key: (n) => n.id,
  });

  private readonly accepts = new GroupCommit<Acceptance, SandboxRow | undefined>({
    many: (as) => this.acceptRows(as),
    key: (a) => a.id,
  });

  private readonly observations = new GroupCommit<Observed, boolean>({
    many: (os) => this.observeRows(os),
    key: (o) => o.id,
  });

  /**
   * Inserts the PENDING row; with a requestId already used, returns the existing row instead.
   * Concurrent creates share one multi-row INSERT (see GroupCommit).
   */
  async insertPending(n: NewSandboxRow): Promise<{ row: SandboxRow; created: boolean }> {
    const inserted = await this.inserts.submit(n);
    if (inserted) return { row: inserted, created: true };
    const existing = n.requestId
      ? await this.findByRequestId(n.organizationId, n.requestId)
      : undefined;
    if (!existing) {
      throw new PaddockError('internal', 'sandbox insert conflicted but no row was found');
    }
    return { row: existing, created: false };
  }

  /** The rows inserted, in order; undefined where the requestId was taken (by an earlier row of the same statement too). */
  private async insertRows(ns: NewSandboxRow[]): Promise<(SandboxRow | undefined)[]> {
    const rows = await this.insertStatement.run<SandboxRow>(ns);
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ns.map((n) => byId.get(n.id));
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
    return this.db
      .selectFrom('gw_sandboxes')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** Internal (reconciler, events): not org-scoped. */
  findAnyById(id: string): Promise<SandboxRow | undefined> {
    return this.db.selectFrom('gw_sandboxes').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async list(organizationId: string, f: ListFilter): Promise<SandboxRow[]> {
    let q = this.db
      .selectFrom('gw_sandboxes')
      .selectAll()
      .where('organization_id', '=', organizationId);
    if (f.tags?.length) q = q.where('tags', '@>', sql<string[]>`${f.tags}::text[]`);
    if (f.states?.length) q = q.where('state', 'in', f.states);
    else if (!f.showTerminated) q = q.where('state', 'not in', TERMINAL);
    if (f.runnerIds?.length) q = q.where('runner_id', 'in', f.runnerIds);
    if (f.after) {
      const { createTime, id } = f.after;
      q = q.where((eb) =>
        eb.or([
          eb('create_time', '>', createTime),
          eb.and([eb('create_time', '=', createTime), eb('id', '>', id)]),
        ]),
      );
    }
    return q
      .orderBy('create_time')
      .orderBy('id')
      .limit(f.pageSize + 1)
      .execute();
  }

  /** Ids of the organization's sandboxes that have not ended, carrying every tag in `tags` (all when absent). */
  async liveIds(organizationId: string, tags: string[] | undefined): Promise<string[]> {
    let q = this.db
      .selectFrom('gw_sandboxes')
      .select('id')
      .where('organization_id', '=', organizationId)
      .where('state', 'not in', TERMINAL);
    if (tags?.length) q = q.where('tags', '@>', sql<string[]>`${tags}::text[]`);
    return (await q.orderBy('create_time').orderBy('id').execute()).map((r) => r.id);
  }

  /** The organization's live sandboxes on these runners, oldest first (what holds their capacity). */
  async liveOnRunners(
    organizationId: string,
    runnerIds: string[],
  ): Promise<{ id: string; runner_id: string; create_time: Date }[]> {
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
  async reassign(
    id: string,
    fromRunner: string,
    toRunner: string,
    runnerGroupId: string,
    placement: PlacementRecord,
    now: Date,
  ): Promise<boolean> {
    const r = await this.db
      .updateTable('gw_sandboxes')
      .set({
        runner_id: toRunner,
        runner_group_id: runnerGroupId,
        placement: JSON.stringify(placement),
        updated_at: now,
      })
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
    await this.db
      .updateTable('gw_sandboxes')
      .set({ placement: JSON.stringify(placement), updated_at: now })
      .where('id', '=', id)
      .execute();
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
   * Concurrent observations (a burst's state events) share one UPDATE.
   */
  async applyObservation(
    id: string,
    runnerId: string,
    o: RunnerObservation,
    acknowledged = true,
  ): Promise<boolean> {
    const terminal = o.rank >= TERMINAL_SANDBOX_STATE_RANK;
    // Before the write when the cache knows this runner owns it (no request is routed on it
    // meanwhile), after it when applied (that proves ownership and beats any read in flight).
    if (terminal) this.routes?.retireIfOwnedBy(id, runnerId);
    const applied = await this.observations.submit({
      id,
      runnerId,
      o,
      acknowledged,
      now: new Date(),
    });
    if (terminal && applied) this.routes?.retire(id);
    if (applied) this.waiters?.notify(id);
    return applied;
  }

  /**
   * One UPDATE for all: each row's SET and WHERE see its own observation (`v`). What an
   * observation leaves out (no reason, no message...) keeps the stored value, as NULL never
   * stands for "clear" in an observation.
   */
  private async observeRows(os: Observed[]): Promise<boolean[]> {
    const values = sql.join(
      os.map(
        ({ id, runnerId, o, acknowledged, now }) =>
          sql`(${id}::text, ${runnerId}::text, ${o.state}::text, ${o.rank}::int, ${o.sequence}::int8, ${acknowledged}::bool, ${o.reason ?? null}::text, ${o.message ?? null}::text, ${o.exitCode ?? null}::int, ${o.effective ? JSON.stringify(o.effective) : null}::jsonb, ${o.containerStatuses && !o.effective ? JSON.stringify({ containerStatuses: o.containerStatuses }) : null}::jsonb, ${o.at}::timestamptz, ${now}::timestamptz)`,
      ),
    );
    const r = await sql<{ id: string }>`
      UPDATE gw_sandboxes AS s SET
        state = v.v_state,
        state_sequence = GREATEST(s.state_sequence, v.v_seq),
        runner_acknowledged = s.runner_acknowledged OR v.v_ack,
        updated_at = v.v_now,
        -- A resumed sandbox drops the reason it was paused for.
        state_reason = CASE WHEN v.v_reason IS NOT NULL THEN v.v_reason WHEN v.v_state = 'STATE_RUNNING' THEN NULL ELSE s.state_reason END,
        message = COALESCE(v.v_message, s.message),
        exit_code = COALESCE(v.v_exit, s.exit_code),
        effective = CASE WHEN v.v_effective IS NOT NULL THEN v.v_effective WHEN v.v_containers IS NOT NULL THEN COALESCE(s.effective, '{}'::jsonb) || v.v_containers ELSE s.effective END,
        start_time = CASE WHEN v.v_state = 'STATE_RUNNING' THEN COALESCE(s.start_time, v.v_at) ELSE s.start_time END,
        end_time = CASE WHEN v.v_rank >= ${TERMINAL_SANDBOX_STATE_RANK} THEN COALESCE(s.end_time, v.v_at) ELSE s.end_time END
      FROM (VALUES ${values}) AS v(v_id, v_runner, v_state, v_rank, v_seq, v_ack, v_reason, v_message, v_exit, v_effective, v_containers, v_at, v_now)
      WHERE s.id = v.v_id AND s.runner_id = v.v_runner AND s.state NOT IN (${TERMINAL_SQL_LIST})
        -- Same rank: the same state again, or RUNNING ⇄ PAUSED; the newer event wins.
        AND (${rankOfState} < v.v_rank OR (${rankOfState} = v.v_rank AND s.state_sequence < v.v_seq))
      RETURNING s.id`.execute(this.db);
    const applied = new Set(r.rows.map((x) => x.id));
    return os.map((x) => applied.has(x.id));
  }

  /**
   * The winning runner accepted the create: records the placement, marks the row acknowledged
   * and applies the runner's view, in one statement (the create path's second commit), shared
   * by concurrent creates.
   */
  async acceptPlacement(
    id: string,
    runnerId: string,
    placement: PlacementRecord,
    o: RunnerObservation,
    now: Date,
  ): Promise<SandboxRow | undefined> {
    if (o.rank >= TERMINAL_SANDBOX_STATE_RANK) this.routes?.retireIfOwnedBy(id, runnerId);
    const row = await this.accepts.submit({ id, runnerId, placement, o, now });
    if (row && isTerminalRow(row)) this.routes?.retire(id);
    else if (row) this.routes?.remember(row);
    if (row) this.waiters?.notify(id);
    return row;
  }

  /** One ACCEPT_PLACEMENT statement for the batch; the rows in the order of `as`. */
  private async acceptRows(as: Acceptance[]): Promise<(SandboxRow | undefined)[]> {
    const rows = await this.acceptStatement.run<SandboxRow>(as);
    const byId = new Map(rows.map((x) => [x.id, x]));
    return as.map((a) => byId.get(a.id));
  }

  async markAcknowledged(id: string, runnerId: string): Promise<void> {
    await this.db
      .updateTable('gw_sandboxes')
      .set({ runner_acknowledged: true })
      .where('id', '=', id)
      .where('runner_id', '=', runnerId)
      .execute();
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

  async markDeleteRequested(
    organizationId: string,
    id: string,
    graceSeconds: number,
    now: Date,
  ): Promise<SandboxRow | undefined> {
    const row = await this.db
      .updateTable('gw_sandboxes')
      .set({
        delete_requested_at: sql<Date>`COALESCE(delete_requested_at, ${now})`,
        delete_grace_seconds: graceSeconds,
        updated_at: now,
      })
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
      .where((eb) =>
        eb.or([
          eb('state', '!=', 'STATE_RUNNING'),
          eb('runner_acknowledged', '=', false),
          eb('delete_requested_at', 'is not', null),
        ]),
      )
      .orderBy('updated_at')
      .limit(limit)
      .execute();
  }

  /** Non-terminal rows owned by a runner. */
  activeOnRunner(runnerId: string): Promise<SandboxRow[]> {
    return this.db
      .selectFrom('gw_sandboxes')
      .selectAll()
      .where('runner_id', '=', runnerId)
      .where('state', 'not in', TERMINAL)
      .execute();
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
  async markTerminal(
    id: string,
    state: 'STATE_COMPLETED' | 'STATE_FAILED',
    reason: SandboxStateReason,
    message: string,
    now: Date,
    onlyRunner?: string,
  ): Promise<boolean> {
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
    const rows = await this.db
      .selectFrom('gw_sandboxes')
      .select('runner_id')
      .distinct()
      .where('state', 'not in', TERMINAL)
      .execute();
    return rows.map((r) => r.runner_id);
  }

  /** Removes a row no runner ever acknowledged (every runner refused it for certain). */
  async deleteUnacknowledged(id: string): Promise<void> {
    this.routes?.invalidate(id);
    await this.db
      .deleteFrom('gw_sandboxes')
      .where('id', '=', id)
      .where('runner_acknowledged', '=', false)
      .execute();
    this.waiters?.notify(id);
  }

  /** Touches a row so the reconciler leaves it alone for another period. */
  async touch(id: string, now: Date): Promise<void> {
    await this.db
      .updateTable('gw_sandboxes')
      .set({ updated_at: now })
      .where('id', '=', id)
      .execute();
  }
}

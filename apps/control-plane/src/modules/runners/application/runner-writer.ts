import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import {
  PaddockError,
  RUNNER_STREAM_TYPE,
  runnerStreamId,
  type RunnerEvent,
} from '@paddock/contracts';
import { EventStore, ExpectedVersionConflictError, IdempotencyConflictError, type EventMetadata, type RecordedEvent } from '@paddock/event-store';
import { decide, evolve, initialState, type RunnerState } from '../domain/runner.decider';
import type { RunnerCommand } from '../domain/runner.commands';
import { LATEST_REVISION, RunnerReadRepository, type RunnerRowWithLatest } from '../projections/runner-read.repository';
import { runnerRow, runnerStateOfRow } from '../projections/runner-row.projection';
import type { RunnersTables } from '../runners.tables';
import { KYSELY } from '../../../infrastructure/tokens';

/** The log only ever holds events this module wrote, so the stored shape is the domain shape. */
export const asRunnerEvent = (e: RecordedEvent): RunnerEvent => ({ type: e.type, data: e.data }) as RunnerEvent;

export const runnerFolder = {
  initialState,
  evolve: (state: RunnerState, e: RecordedEvent): RunnerState => evolve(state, asRunnerEvent(e)),
};

export interface WriteOutcome {
  state: RunnerState;
  version: number;
  events: RunnerEvent[];
  /** The runner's `cp_runners` row after the write (with its channel's latest revision); absent once removed. */
  row?: RunnerRowWithLatest;
}

/** Builds the command from the row it is decided against (so checks against the row see that same row). */
export type CommandOfRow = (row: RunnerRowWithLatest | undefined) => RunnerCommand;

/** Reads the runner's row, optionally inside `trx` and locked. */
type FindRow = (opts: { trx?: Transaction<RunnersTables>; forUpdate?: boolean }) => Promise<RunnerRowWithLatest | undefined>;

/** One write to a runner stream, as both write paths take it. */
interface RunnerWrite {
  /** The stream's uid when known up front; else it comes from the row `find` returns. */
  uid: string | undefined;
  find: FindRow;
  commandOf: CommandOfRow;
  metadata: EventMetadata;
  retries: number;
}

const UNIQUE_VIOLATION = '23505';
/** Optimistic retries on a version conflict; each retry re-reads and re-decides. */
const DEFAULT_RETRIES = 8;
/**
 * Unlocked attempts (read, decide, one-statement write) before a write falls back to the locking
 * transaction, which always makes progress under contention and folds the stream if the row ever
 * disagreed with it.
 */
const OPTIMISTIC_ATTEMPTS = 3;

function pgError(e: unknown): { code?: string; constraint?: string } {
  return typeof e === 'object' && e !== null ? (e) : {};
}

/**
 * load → decide → append → project, atomically (one statement, or one transaction on the locking
 * path and for creates): the read model `cp_runners` is updated with the append (read-your-writes),
 * and its unique indexes refuse a duplicate runner id or a second runner on a cluster by rolling
 * the append back with it.
 */
@Injectable()
export class RunnerWriter {
  constructor(
    private readonly store: EventStore<RunnersTables>,
    private readonly repo: RunnerReadRepository,
    @Inject(KYSELY) private readonly db: Kysely<RunnersTables>,
  ) {}

  /**
   * The read-model write of {@link EventStore.appendProjected} for `state`: the row updated (and
   * returned as a GET reads it) or deleted, only if the stream moved (`es_moved`).
   */
  private projectionStatement(state: RunnerState, version: number): { statement: RawBuilder<unknown>; keepsRow: boolean } {
    const row = runnerRow(state, version);
    const uid = state.status === 'Absent' ? '' : state.uid;
    if (!row) return { statement: sql`DELETE FROM cp_runners WHERE uid = ${uid} AND EXISTS (SELECT 1 FROM es_moved) RETURNING uid`, keepsRow: false };
    const { uid: _uid, ...changes } = row;
    const update = this.db
      .updateTable('cp_runners')
      .set(changes)
      .where('uid', '=', uid)
      .where(sql<boolean>`EXISTS (SELECT 1 FROM es_moved)`)
      .returningAll()
      .returning([sql<string>`create_time::text`.as('create_time_text'), LATEST_REVISION.as('latest_revision')]);
    return { statement: sql`${update}`, keepsRow: true };
  }

  /**
   * Upserts (or deletes) the row of `state`, RETURNING what a GET would read (the channel's latest
   * release is computed there too, since the write may have changed the channel), so the caller
   * renders its response without another read.
   */
  private async project(trx: Transaction<RunnersTables>, state: RunnerState, version: number): Promise<RunnerRowWithLatest | undefined> {
    if (state.status === 'Absent') return undefined;
    const row = runnerRow(state, version);
    if (!row) {
      await trx.deleteFrom('cp_runners').where('uid', '=', state.uid).execute();
      return undefined;
    }
    const { uid: _uid, ...changes } = row;
    const written = await trx
      .insertInto('cp_runners')
      .values(row)
      .onConflict((oc) => oc.column('uid').doUpdateSet(changes))
      .returningAll()
      .returning([sql<string>`create_time::text`.as('create_time_text'), LATEST_REVISION.as('latest_revision')])
      .executeTakeFirstOrThrow();
    return written;
  }

  private toNew(events: RunnerEvent[], metadata: EventMetadata) {
    return events.map((e) => ({ type: e.type, data: e.data, metadata }));
  }

  /** Runs `command` against the runner stream `uid`, retrying on concurrent appends. */
  async execute(uid: string, command: RunnerCommand, metadata: EventMetadata, retries = DEFAULT_RETRIES): Promise<WriteOutcome> {
    return this.run({ uid, find: (opts) => this.repo.findByUidWithLatest(uid, opts), commandOf: () => command, metadata, retries });
  }

  /**
   * Runs the command built from the runner named `ref` (runner id or uid) in `organizationId`;
   * `undefined` when the organization has no such runner (the caller answers `not_found`).
   */
  async executeByRef(
    organizationId: string,
    ref: string,
    commandOf: CommandOfRow,
    metadata: EventMetadata,
    retries = DEFAULT_RETRIES,
  ): Promise<WriteOutcome | undefined> {
    let missing = false;
    const outcome = await this.run({
      uid: undefined,
      find: async (opts) => {
        const row = await this.repo.findByRefWithLatest(organizationId, ref, opts);
        missing = row === undefined;
        return row;
      },
      commandOf,
      metadata,
      retries,
    });
    return missing ? undefined : outcome;
  }

  /**
   * Optimistic first: read the row (no transaction, no lock), decide from the state it holds,
   * then append and update the row in ONE statement whose expected version is the row's
   * `stream_version` (`EventStore.appendProjected`): one round trip for the read, one for the
   * write. A concurrent append makes the statement write nothing; the attempt is re-read and
   * re-decided (a stale etag then fails as it should). The row is locked before the stream in
   * that statement, the order every writer uses, so writers never deadlock each other.
   *
   * Without a row (never created, or removed), or after {@link OPTIMISTIC_ATTEMPTS} lost races,
   * the locking transaction decides instead.
   */
  private async run(write: RunnerWrite): Promise<WriteOutcome> {
    const { find, commandOf, metadata, retries } = write;
    for (let attempt = 0; attempt < Math.min(OPTIMISTIC_ATTEMPTS, retries + 1); attempt++) {
      const row = await find({});
      if (!row || row.stream_version < 1) break;
      const state = runnerStateOfRow(row) as RunnerState;
      const version = row.stream_version;
      const events = decide(commandOf(row), state);
      if (events.length === 0) return { state, version, events, row };
      const next = events.reduce(evolve, state);
      try {
        const projection = this.projectionStatement(next, version + events.length);
        const { result, rows } = await this.store.appendProjected<RunnerRowWithLatest>(runnerStreamId(row.uid), RUNNER_STREAM_TYPE, this.toNew(events, metadata), {
          expectedVersion: version,
          lockFirst: sql`SELECT uid FROM cp_runners WHERE uid = ${row.uid} FOR UPDATE`,
          project: projection.statement,
        });
        const written = projection.keepsRow ? rows[0] : undefined;
        return { state: next, version: result.streamPosition, events, ...(written ? { row: written } : {}) };
      } catch (e) {
        if (!(e instanceof ExpectedVersionConflictError)) throw e;
      }
    }
    return this.runLocked(write);
  }

  /**
   * One transaction: lock the projection row (`SELECT … FOR UPDATE`, with the channel's latest
   * release in the same query), decide from the state it holds, append with its `stream_version`
   * as the expected version (checked in the append statement), upsert the evolved row RETURNING it.
   * BEGIN + 3 statements + COMMIT, whatever the stream's length.
   *
   * Every writer locks the row before the stream (`es_streams` row, taken by the append), so two
   * writers never wait on each other in opposite orders. Should the row ever disagree with the
   * stream (the append's version check refuses it), the retry folds the stream instead, still
   * under the row lock. Without a row (never created, or removed) the stream is folded as before.
   */
  private async runLocked({ uid, find, commandOf, metadata, retries }: RunnerWrite): Promise<WriteOutcome> {
    let trustRow = true;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.store.transaction(async (trx): Promise<WriteOutcome> => {
          const locked = await find({ trx, forUpdate: true });
          const streamUid = locked?.uid ?? uid;
          if (streamUid === undefined) return { state: initialState(), version: 0, events: [] };
          const streamId = runnerStreamId(streamUid);
          const { state, version } =
            locked && trustRow
              ? { state: runnerStateOfRow(locked) as RunnerState, version: locked.stream_version }
              : await this.store.aggregate(streamId, runnerFolder, { trx });
          const command = commandOf(locked);
          const events = decide(command, state);
          if (events.length === 0) return { state, version, events, ...(locked ? { row: locked } : {}) };
          const appended = await this.store.append(streamId, RUNNER_STREAM_TYPE, this.toNew(events, metadata), { expectedVersion: version, trx });
          const next = events.reduce(evolve, state);
          const row = await this.project(trx, next, appended.streamPosition);
          return { state: next, version: appended.streamPosition, events, ...(row ? { row } : {}) };
        });
      } catch (e) {
        if (e instanceof ExpectedVersionConflictError && attempt < retries) {
          trustRow = false;
          continue;
        }
        throw e;
      }
    }
  }

  /**
   * Creates a runner stream. With an idempotency key, a retry of the same request returns the
   * first runner's uid (`replayed`); the same key with another request is `already_exists`.
   */
  async create(
    uid: string,
    command: Extract<RunnerCommand, { type: 'CreateRunner' }>,
    metadata: EventMetadata,
    idempotency: { key: string; requestHash: string } | undefined,
  ): Promise<{ uid: string; replayed: boolean }> {
    const streamId = runnerStreamId(uid);
    try {
      return await this.store.transaction(async (trx) => {
        const state = initialState();
        const events = decide(command, state);
        const appended = await this.store.append(streamId, RUNNER_STREAM_TYPE, this.toNew(events, metadata), {
          expectedVersion: 'no_stream',
          trx,
          ...(idempotency ? { idempotency: { ...idempotency, result: { uid } } } : {}),
        });
        if (appended.replayed) {
          const first = (appended.result as { uid?: string } | undefined)?.uid;
          if (!first) throw new PaddockError('internal', 'idempotent create replay carries no runner uid');
          return { uid: first, replayed: true };
        }
        await this.project(trx, events.reduce(evolve, state), appended.streamPosition);
        return { uid, replayed: false };
      });
    } catch (e) {
      if (e instanceof IdempotencyConflictError) {
        throw new PaddockError('already_exists', 'request_id was already used for a different create request; use a new request_id for a different configuration', {
          reason: 'PADDOCK_VALIDATION_FAILED',
          violations: [{ field: 'request_id', rule: 'reuse_only_with_identical_request', description: 'the request_id is bound to another request body' }],
        });
      }
      const pg = pgError(e);
      if (pg.code === UNIQUE_VIOLATION && pg.constraint === 'cp_runners_org_cluster_uq') {
        throw new PaddockError('already_exists', 'a managed runner already exists for this cluster', {
          reason: 'PADDOCK_RUNNER_EXISTS_FOR_CLUSTER',
          violations: [{ field: 'runner.identity.cluster_id', rule: 'one_runner_per_cluster', description: 'a managed runner already exists for this cluster' }],
        });
      }
      if (pg.code === UNIQUE_VIOLATION && pg.constraint === 'cp_runners_org_runner_id_uq') {
        throw new PaddockError('already_exists', `managed runner ${command.data.runnerId} already exists in this organization`, {
          reason: 'PADDOCK_RUNNER_ID_TAKEN',
          violations: [{ field: 'runner.identity.runner_id', rule: 'unique_in_organization', description: `runner id ${command.data.runnerId} is taken` }],
        });
      }
      throw e;
    }
  }

  readStream(uid: string): Promise<RecordedEvent[]> {
    return this.store.readStream(runnerStreamId(uid));
  }
}

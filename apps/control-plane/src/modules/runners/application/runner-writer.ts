import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import {
  PaddockError,
  RUNNER_STREAM_TYPE,
  runnerStreamId,
  type RunnerEvent,
} from '@paddock/contracts';
import { EventStore, ExpectedVersionConflictError, IdempotencyConflictError, type EventMetadata, type Projection, type RecordedEvent } from '@paddock/event-store';
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

/** What a GET reads besides the row's columns (the channel's latest release included). */
const ROW_EXTRAS = [sql<string>`create_time::text`.as('create_time_text'), LATEST_REVISION.as('latest_revision')] as const;

export interface WriteOutcome {
  state: RunnerState;
  version: number;
  events: RunnerEvent[];
  /** The runner's `cp_runners` row after the write (with its channel's latest revision); absent once removed. */
  row?: RunnerRowWithLatest;
}

/** Builds the command from the row it is decided against (so checks against the row see that same row). */
export type CommandOfRow = (row: RunnerRowWithLatest | undefined) => RunnerCommand;

/** Reads the runner's row (no lock, no transaction: the write statement locks it). */
type FindRow = () => Promise<RunnerRowWithLatest | undefined>;

/** One change to an existing runner stream. */
interface RunnerWrite {
  /** The stream's uid when known up front; else it comes from the row `find` returns. */
  uid: string | undefined;
  find: FindRow;
  commandOf: CommandOfRow;
  metadata: EventMetadata;
  retries: number;
  /**
   * The row this writer last wrote for the runner, tried before `find` (see {@link RunnerWriter.executeByRef});
   * `remember` is told each row written or read, and `undefined` once the row is gone or stale.
   */
  reuse?: { cached: RunnerRowWithLatest | undefined; remember: (row: RunnerRowWithLatest | undefined) => void };
}

/**
 * Rows kept for reuse; past this the oldest goes. A bound on memory, not a tuning knob: a row holds
 * its policy (up to 256 KiB encoded) and rendered Deployment, and the runners edited in a burst are few.
 */
const MAX_REUSED_ROWS = 256;

const UNIQUE_VIOLATION = '23505';
/**
 * Attempts after a lost race; each re-reads the row and re-decides. A lost race means another
 * write to the same runner landed since the row was read, so a write fails only when more than
 * this many others land on that one runner while it is in flight.
 */
const DEFAULT_RETRIES = 32;

function pgError(e: unknown): { code?: string; constraint?: string } {
  return typeof e === 'object' && e !== null ? (e) : {};
}

/**
 * load → decide → append → project, atomically: the read model `cp_runners` is updated in the
 * statement that appends (read-your-writes), and its unique indexes refuse a duplicate runner id
 * or a second runner on a cluster by rolling the append back with it. Two purposes, one path
 * each: {@link create} starts a stream (one transaction, idempotent); {@link execute} and
 * {@link executeByRef} change one (one statement).
 */
@Injectable()
export class RunnerWriter {
  /** By organization and ref: the row the last write through {@link executeByRef} returned. */
  private readonly written = new Map<string, RunnerRowWithLatest>();

  constructor(
    private readonly store: EventStore<RunnersTables>,
    private readonly repo: RunnerReadRepository,
    @Inject(KYSELY) private readonly db: Kysely<RunnersTables>,
  ) {}

  /**
   * The row of `state` updated, RETURNING what a GET reads (the channel's latest release too,
   * since the write may have changed the channel); or deleted, once the state has no row.
   */
  private projection(state: RunnerState, version: number): { project: Projection<RunnerRowWithLatest>; keepsRow: boolean } {
    const row = runnerRow(state, version);
    const uid = state.status === 'Absent' ? '' : state.uid;
    if (!row) {
      return {
        project: (ifAppended) => this.db.deleteFrom('cp_runners').where('uid', '=', uid).where(ifAppended).returningAll().returning(ROW_EXTRAS),
        keepsRow: false,
      };
    }
    const { uid: _uid, ...changes } = row;
    return {
      project: (ifAppended) => this.db.updateTable('cp_runners').set(changes).where('uid', '=', uid).where(ifAppended).returningAll().returning(ROW_EXTRAS),
      keepsRow: true,
    };
  }

  private toNew(events: RunnerEvent[], metadata: EventMetadata) {
    return events.map((e) => ({ type: e.type, data: e.data, metadata }));
  }

  /** Runs `command` against the runner stream `uid`, retrying on concurrent appends. */
  async execute(uid: string, command: RunnerCommand, metadata: EventMetadata, retries = DEFAULT_RETRIES): Promise<WriteOutcome> {
    return this.change({ uid, find: () => this.repo.findByUidWithLatest(uid), commandOf: () => command, metadata, retries });
  }

  /**
   * Runs the command built from the runner named `ref` (runner id or uid) in `organizationId`;
   * `undefined` when the organization has no such runner (the caller answers `not_found`).
   *
   * A runner edited again and again is decided against the row this writer's last write to it
   * returned, which saves the read. That is safe because the write that follows is conditional
   * on the row's `stream_version`, so it lands only if no other write has landed since; and it
   * is the only outcome such a decision may have: a refusal, a change that writes nothing or a
   * lost race is decided again from a fresh read, so answers are always those of the current
   * row. The reused row's `latest_revision` may be older than the catalogue: a command built
   * here must not decide on it.
   */
  async executeByRef(
    organizationId: string,
    ref: string,
    commandOf: CommandOfRow,
    metadata: EventMetadata,
    retries = DEFAULT_RETRIES,
  ): Promise<WriteOutcome | undefined> {
    let missing = false;
    const key = `${organizationId}\u0000${ref}`;
    const outcome = await this.change({
      uid: undefined,
      find: async () => {
        const row = await this.repo.findByRefWithLatest(organizationId, ref);
        missing = row === undefined;
        return row;
      },
      commandOf,
      metadata,
      retries,
      reuse: {
        cached: this.written.get(key),
        remember: (row) => {
          this.written.delete(key);
          if (!row) return;
          if (this.written.size >= MAX_REUSED_ROWS) {
            // Oldest insertion first: Map iteration order.
            const oldest = this.written.keys().next();
            if (!oldest.done) this.written.delete(oldest.value);
          }
          this.written.set(key, row);
        },
      },
    });
    return missing ? undefined : outcome;
  }

  /**
   * Reads the row (no transaction, no lock), decides from the state it holds, then appends and
   * updates the row in ONE statement whose expected version is the row's `stream_version`
   * (`EventStore.appendProjected`): one round trip for the read, one for the write, whatever the
   * stream's length. The statement locks the row before the stream, the order every writer uses,
   * so writers never deadlock each other. A concurrent append makes the statement write nothing;
   * the attempt is re-read and re-decided (a stale etag then fails as it should).
   *
   * Should the row ever disagree with the stream (a lost race whose re-read shows the same
   * version), the next attempt decides from the folded stream and the write corrects the row.
   * Without a row (never created, or removed) the state is the folded stream, in which commands
   * find nothing to change: a live runner always has its row, written with its first event.
   */
  private async change({ uid, find, commandOf, metadata, retries, reuse }: RunnerWrite): Promise<WriteOutcome> {
    let disagreeingVersion: number | undefined;
    let reused = reuse?.cached;
    for (let attempt = 0; ; ) {
      const fromCache = reused;
      reused = undefined;
      const row = fromCache ?? (await find());
      if (!fromCache) reuse?.remember(row);
      const streamUid = row?.uid ?? uid;
      if (streamUid === undefined) return { state: initialState(), version: 0, events: [] };
      const streamId = runnerStreamId(streamUid);
      const { state, version } =
        row && row.stream_version !== disagreeingVersion
          ? { state: runnerStateOfRow(row) as RunnerState, version: row.stream_version }
          : await this.store.aggregate(streamId, runnerFolder);
      let events: RunnerEvent[];
      try {
        events = decide(commandOf(row), state);
      } catch (e) {
        // A refusal is the current row's to give: decide again from a fresh read.
        if (fromCache) continue;
        throw e;
      }
      if (events.length === 0) {
        // Nothing to write proves nothing about the reused row: answer from a fresh read.
        if (fromCache) continue;
        return { state, version, events, ...(row ? { row } : {}) };
      }
      if (!row) throw new PaddockError('internal', `runner ${streamUid} has a live stream but no read-model row`);
      const next = events.reduce(evolve, state);
      try {
        const { project, keepsRow } = this.projection(next, version + events.length);
        const { result, rows } = await this.store.appendProjected(streamId, RUNNER_STREAM_TYPE, this.toNew(events, metadata), {
          expectedVersion: version,
          lockFirst: sql`SELECT uid FROM cp_runners WHERE uid = ${row.uid} FOR UPDATE`,
          project,
        });
        const written = keepsRow ? rows[0] : undefined;
        reuse?.remember(written);
        return { state: next, version: result.streamPosition, events, ...(written ? { row: written } : {}) };
      } catch (e) {
        reuse?.remember(undefined);
        if (!(e instanceof ExpectedVersionConflictError)) throw e;
        // A reused row that lost the race was stale: that costs no attempt, the fresh read is the first.
        if (fromCache) continue;
        if (attempt >= retries) throw e;
        attempt++;
        if (row.stream_version === version) disagreeingVersion = row.stream_version;
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
        const row = runnerRow(events.reduce(evolve, state), appended.streamPosition);
        if (row) await trx.insertInto('cp_runners').values(row).execute();
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

import { randomUUID } from 'node:crypto';
import {
  sql,
  type CompiledQuery,
  type Expression,
  type Kysely,
  type QueryExecutorProvider,
  type RawBuilder,
  type SqlBool,
  type Transaction,
} from 'kysely';
import { PaddockError } from '@paddock/contracts';
import { ExpectedVersionConflictError, IdempotencyConflictError, invalidAppend } from './errors';
import {
  MESSAGE_COLUMNS,
  readAll,
  toRecordedEvent,
  type MessageRow,
  type ReadAllOptions,
  type ReadAllResult,
} from './global-log';
import type { LogWaker } from './log-waker';
import { logWakerOf } from './postgres';
import type {
  AppendOptions,
  AppendResult,
  EventStoreTables,
  ExpectedVersion,
  IdempotencyOptions,
  NewEvent,
  RecordedEvent,
} from './types';

export interface EventStoreOptions {
  /**
   * Nudge log consumers after each commit (coalesced, see LogWaker). Default true when a waker
   * is available (given, or the db came from createPostgresDb).
   */
  notify?: boolean;
  waker?: LogWaker;
}

/** How a stream folds into state (see {@link EventStore.aggregate}). */
export interface Folder<S> {
  initialState(): S;
  evolve(state: S, event: RecordedEvent): S;
}

/**
 * A statement on the caller's own tables (an UPDATE, DELETE or INSERT with RETURNING): a kysely
 * query builder or an `sql` fragment. The type of its RETURNING rows is what the append returns.
 */
export interface ProjectionStatement<R> {
  compile(executorProvider: QueryExecutorProvider): CompiledQuery<R>;
}

/**
 * The read-model write of {@link EventStore.appendProjected}, built around `ifAppended`: the
 * store's condition that the append happened (put it in the statement's WHERE). The store owns
 * what the condition refers to; a projection never names the store's internals.
 */
export type Projection<R> = (ifAppended: Expression<SqlBool>) => ProjectionStatement<R>;

/** The condition handed to projections: the stream moved in this statement (see appendProjected). */
const IF_APPENDED = sql<SqlBool>`EXISTS (SELECT 1 FROM es_moved)`;

interface IdempotencyRow {
  stream_id: string;
  request_hash: string | null;
  result: unknown;
  stream_position: string | null;
  transaction_id: string | null;
  global_positions: string[] | null;
}

interface AppendOutcome {
  result: AppendResult;
  recorded: RecordedEvent[];
}

const UNIQUE_VIOLATION = '23505';

function pgErrorOf(e: unknown): { code?: string; constraint?: string } {
  if (typeof e !== 'object' || e === null) return {};
  return {
    ...('code' in e && typeof e.code === 'string' ? { code: e.code } : {}),
    ...('constraint' in e && typeof e.constraint === 'string' ? { constraint: e.constraint } : {}),
  };
}

/**
 * Streams with optimistic concurrency over Postgres (STYLE B.3). Generic over the caller's
 * database type `DB`: the store writes its own `es_*` tables with raw SQL, so any `Kysely<DB>`
 * works and a caller's transaction (`opts.trx`) is its own `Transaction<DB>`.
 */
export class EventStore<DB = EventStoreTables> {
  private readonly waker: LogWaker | undefined;

  constructor(
    private readonly db: Kysely<DB>,
    opts: EventStoreOptions = {},
  ) {
    this.waker = opts.notify === false ? undefined : (opts.waker ?? logWakerOf(db));
  }

  /**
   * Appends `events` to a stream in one transaction: idempotency claim, conditional move of the
   * stream version (the expected-version check IS that statement), message insert. With `opts.trx` it joins the caller's transaction; call {@link nudge} (or use
   * {@link transaction}) after that commits so consumers wake at once instead of at their poll.
   */
  async append(
    streamId: string,
    streamType: string,
    events: NewEvent[],
    opts: AppendOptions<DB>,
  ): Promise<AppendResult> {
    return (await this.appendWithEvents(streamId, streamType, events, opts)).result;
  }

  /** Runs `fn` in a transaction and nudges consumers after it commits. */
  async transaction<T>(fn: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
    const out = await this.db.transaction().execute(fn);
    this.nudge();
    return out;
  }

  /** Wakes log consumers (coalesced; a no-op without a waker). */
  nudge(): void {
    this.waker?.nudge();
  }

  /** Events of one stream in stream order, from `fromPosition` (inclusive, default 1). */
  async readStream(
    streamId: string,
    opts: { fromPosition?: number; trx?: Transaction<DB> } = {},
  ): Promise<RecordedEvent[]> {
    const { rows } = await sql<MessageRow>`
      SELECT ${MESSAGE_COLUMNS} FROM es_messages
       WHERE stream_id = ${streamId} AND stream_position >= ${opts.fromPosition ?? 1}
       ORDER BY es_messages.stream_position`.execute(opts.trx ?? this.db);
    return rows.map(toRecordedEvent);
  }

  /** Folds a stream into state; `version` is the stream position of the last event (0 if none). */
  async aggregate<S>(
    streamId: string,
    decider: Folder<S>,
    opts: { trx?: Transaction<DB> } = {},
  ): Promise<{ state: S; version: number }> {
    const events = await this.readStream(streamId, opts.trx ? { trx: opts.trx } : {});
    let state = decider.initialState();
    for (const e of events) state = decider.evolve(state, e);
    return { state, version: events[events.length - 1]?.streamPosition ?? 0 };
  }

  async findIdempotent(
    key: string,
  ): Promise<{ streamId: string; result: unknown; requestHash?: string } | undefined> {
    const { rows } = await sql<IdempotencyRow>`
      SELECT stream_id, request_hash, result FROM es_idempotency WHERE key = ${key}`.execute(
      this.db,
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      streamId: row.stream_id,
      result: row.result,
      ...(row.request_hash != null ? { requestHash: row.request_hash } : {}),
    };
  }

  /** The global log, horizon-safe; see {@link readAll}. */
  async readAll(opts: ReadAllOptions): Promise<ReadAllResult> {
    return readAll(this.db, opts);
  }

  private async storedOutcome(
    key: string,
    executor: Kysely<DB> = this.db,
  ): Promise<AppendResult | undefined> {
    const { rows } = await sql<IdempotencyRow>`
      SELECT stream_id, request_hash, result, stream_position, transaction_id::text AS transaction_id, global_positions
        FROM es_idempotency WHERE key = ${key}`.execute(executor);
    const row = rows[0];
    if (!row) return undefined;
    return {
      streamPosition: Number(row.stream_position ?? 0),
      globalPositions: row.global_positions ?? [],
      transactionId: row.transaction_id ?? '',
      replayed: true,
      result: row.result,
    };
  }

  private async appendWithEvents(
    streamId: string,
    streamType: string,
    events: NewEvent[],
    opts: AppendOptions<DB>,
  ): Promise<AppendOutcome> {
    validateAppend(streamId, streamType, events, opts.expectedVersion);
    if (opts.trx) return this.appendIn(opts.trx, streamId, streamType, events, opts);
    let outcome: AppendOutcome;
    if (!opts.idempotency) {
      // Nothing else has to share the transaction: the single append statement runs in
      // autocommit, one round trip instead of BEGIN / statement / COMMIT.
      outcome = await this.appendEvents(
        this.db,
        streamId,
        streamType,
        events,
        opts.expectedVersion,
      );
    } else {
      outcome = await this.db
        .transaction()
        .execute((trx) => this.appendIn(trx, streamId, streamType, events, opts));
    }
    if (!outcome.result.replayed) this.nudge();
    return outcome;
  }

  private async appendIn(
    trx: Transaction<DB>,
    streamId: string,
    streamType: string,
    events: NewEvent[],
    opts: AppendOptions<DB>,
  ): Promise<AppendOutcome> {
    const idem = opts.idempotency;
    if (idem) {
      // Claim the key first: a concurrent holder of the same key makes this insert wait for its
      // outcome, so exactly one append happens per key (the primary key decides).
      const claim = await sql<{ key: string }>`
        INSERT INTO es_idempotency (key, stream_id, request_hash, result)
        VALUES (${idem.key}, ${streamId}, ${idem.requestHash ?? null}, ${idem.result === undefined ? null : JSON.stringify(idem.result)}::jsonb)
        ON CONFLICT (key) DO NOTHING
        RETURNING key`.execute(trx);
      if (claim.rows.length === 0) {
        const stored = await this.storedOutcome(idem.key, trx);
        if (!stored)
          {throw new Error(`idempotency key ${idem.key} vanished between conflict and read`);}
        const seen = await sql<{ request_hash: string | null }>`
          SELECT request_hash FROM es_idempotency WHERE key = ${idem.key}`.execute(trx);
        checkRequestHash(idem, seen.rows[0]?.request_hash ?? undefined);
        return { result: stored, recorded: [] };
      }
    }

    const outcome = await this.appendEvents(
      trx,
      streamId,
      streamType,
      events,
      opts.expectedVersion,
    );
    if (idem) {
      await sql`
        UPDATE es_idempotency
           SET stream_position = ${outcome.result.streamPosition}, transaction_id = ${outcome.result.transactionId}::xid8,
               global_positions = ${JSON.stringify(outcome.result.globalPositions)}::jsonb
         WHERE key = ${idem.key}`.execute(trx);
      if (idem.result !== undefined) outcome.result.result = idem.result;
    }
    return outcome;
  }

  /**
   * ONE statement: move the stream version under the expectation (CTE), then insert the
   * messages numbered from the moved version. If the expectation fails the CTE yields no row,
   * nothing is inserted, and zero rows come back: that IS the conflict. Concurrent racers queue
   * on the stream row and re-check the WHERE against the committed version, so exactly one of N
   * racers with the same expectation wins; the (stream_id, stream_position) key backs it up.
   */
  private async appendEvents(
    executor: Kysely<DB>,
    streamId: string,
    streamType: string,
    events: NewEvent[],
    expected: ExpectedVersion,
  ): Promise<AppendOutcome> {
    const count = events.length;
    const values = eventValues(events);
    let rows: MessageRow[];
    try {
      ({ rows } = await sql<MessageRow>`
        WITH moved AS (${moveStream(streamId, streamType, count, expected)})
        INSERT INTO es_messages (stream_id, stream_type, stream_position, message_id, message_type,
                                 message_schema_version, message_data, message_metadata)
        SELECT ${streamId}, ${streamType}, moved.stream_position - ${count} + v.ord, v.id, v.type, v.ver, v.data, v.meta
          FROM moved CROSS JOIN (VALUES ${values}) AS v(ord, id, type, ver, data, meta)
         ORDER BY v.ord -- global positions follow stream order inside the append
        RETURNING ${MESSAGE_COLUMNS}`.execute(executor));
    } catch (e) {
      throw await this.appendError(e, executor, streamId, expected);
    }
    if (rows.length === 0) {
      throw new ExpectedVersionConflictError(
        streamId,
        expected,
        await this.currentVersion(executor, streamId),
      );
    }
    const recorded = rows.map(toRecordedEvent).sort((a, b) => a.streamPosition - b.streamPosition);
    return {
      result: {
        streamPosition: recorded[recorded.length - 1]?.streamPosition ?? 0,
        globalPositions: recorded.map((e) => e.globalPosition),
        transactionId: recorded[0]?.transactionId ?? '',
        replayed: false,
      },
      recorded,
    };
  }

  /** The store's error for a failed append statement (a duplicate message id, a lost race), else `e`. */
  private async appendError(e: unknown, executor: Kysely<DB>, streamId: string, expected: ExpectedVersion): Promise<unknown> {
    const pg = pgErrorOf(e);
    if (pg.code === UNIQUE_VIOLATION && pg.constraint === 'es_messages_message_id_key') {
      return new PaddockError('already_exists', 'events[].messageId: a message with this id is already recorded', {
        violations: [{ field: 'events[].messageId', rule: 'must be unique across the log', description: 'duplicate message id' }],
      });
    }
    if (pg.code === UNIQUE_VIOLATION && pg.constraint === 'es_messages_pkey') {
      return new ExpectedVersionConflictError(streamId, expected, await this.currentVersion(executor, streamId));
    }
    return e;
  }

  /**
   * Append and read-model update in ONE autocommit statement (one round trip, no BEGIN/COMMIT):
   * the conditional stream move, the message insert and the caller's `project` statement are
   * data-modifying CTEs of the same statement, so they commit or vanish together.
   *
   * `project` builds the caller's statement around `ifAppended` (see {@link Projection}); a
   * statement that leaves it out is refused, since it would write even when the expectation
   * fails. When the expectation fails nothing is written and {@link ExpectedVersionConflictError}
   * is thrown. `lockFirst`, when given, is a `SELECT … FOR UPDATE` run before the stream row is
   * locked, for callers whose other writers lock their read-model row before the stream (a
   * consistent lock order); the append then also needs that row to exist.
   * Returned row columns must not start with `es_`.
   */
  async appendProjected<R extends object>(
    streamId: string,
    streamType: string,
    events: NewEvent[],
    opts: { expectedVersion: ExpectedVersion; project: Projection<R>; lockFirst?: RawBuilder<unknown> },
  ): Promise<{ result: AppendResult; rows: R[] }> {
    const project = opts.project(IF_APPENDED);
    if (!project.compile(this.db).sql.includes(IF_APPENDED.compile(this.db).sql)) {
      throw invalidAppend('project', 'must be conditional on the append (use ifAppended in its WHERE)', 'a projection that ignores the condition writes even when the expected version fails');
    }
    validateAppend(streamId, streamType, events, opts.expectedVersion);
    const count = events.length;
    const lock = opts.lockFirst ? sql`es_locked AS (${opts.lockFirst}),` : sql``;
    const guard = opts.lockFirst ? sql`EXISTS (SELECT 1 FROM es_locked)` : undefined;
    if (guard && (typeof opts.expectedVersion !== 'number' || opts.expectedVersion === 0) && opts.expectedVersion !== 'stream_exists') {
      throw invalidAppend('expectedVersion', 'must name an existing stream (a position > 0 or stream_exists) with lockFirst', 'lockFirst orders locks before moving an existing stream');
    }
    type Row = { es_stream_position: number; es_global_positions: string[] | null; es_transaction_id: string | null; es_projected: boolean } & R;
    let rows: Row[];
    try {
      ({ rows } = await sql<Row>`
        WITH ${lock}
        es_moved AS (${moveStream(streamId, streamType, count, opts.expectedVersion, guard)}),
        es_appended AS (
          INSERT INTO es_messages (stream_id, stream_type, stream_position, message_id, message_type,
                                   message_schema_version, message_data, message_metadata)
          SELECT ${streamId}, ${streamType}, es_moved.stream_position - ${count} + v.ord, v.id, v.type, v.ver, v.data, v.meta
            FROM es_moved CROSS JOIN (VALUES ${eventValues(events)}) AS v(ord, id, type, ver, data, meta)
           ORDER BY v.ord
          RETURNING global_position, transaction_id),
        es_projected AS (${project})
        SELECT m.stream_position AS es_stream_position,
               (SELECT array_agg(a.global_position::text ORDER BY a.global_position) FROM es_appended a) AS es_global_positions,
               (SELECT min(a.transaction_id::text) FROM es_appended a) AS es_transaction_id,
               NOT (p IS NULL) AS es_projected,
               p.*
          FROM es_moved m LEFT JOIN es_projected p ON true`.execute(this.db));
    } catch (e) {
      throw await this.appendError(e, this.db, streamId, opts.expectedVersion);
    }
    const first = rows[0];
    if (!first) throw new ExpectedVersionConflictError(streamId, opts.expectedVersion, await this.currentVersion(this.db, streamId));
    this.nudge();
    const projected = rows.filter((r) => r.es_projected).map((r) => {
      const { es_stream_position: _p, es_global_positions: _g, es_transaction_id: _t, es_projected: _x, ...row } = r;
      return row as unknown as R;
    });
    return {
      result: {
        streamPosition: Number(first.es_stream_position),
        globalPositions: first.es_global_positions ?? [],
        transactionId: first.es_transaction_id ?? '',
        replayed: false,
      },
      rows: projected,
    };
  }

  private async currentVersion(executor: Kysely<DB>, streamId: string): Promise<number> {
    const { rows } = await sql<{ stream_position: string }>`
      SELECT stream_position FROM es_streams WHERE stream_id = ${streamId}`.execute(executor);
    return Number(rows[0]?.stream_position ?? 0);
  }
}

/** `(ord, id, type, ver, data, meta)` rows of a VALUES list, in append order. */
function eventValues(events: NewEvent[]): RawBuilder<unknown> {
  return sql.join(
    events.map(
      (e, i) => sql`(${i + 1}::int, ${e.messageId ?? randomUUID()}::uuid, ${e.type}::text, ${e.schemaVersion ?? 1}::int,
          ${JSON.stringify(e.data ?? null)}::jsonb, ${JSON.stringify(e.metadata ?? {})}::jsonb)`,
    ),
  );
}

/** The conditional move of es_streams for one expectation; yields one row iff it held. */
function moveStream(
  streamId: string,
  streamType: string,
  count: number,
  expected: ExpectedVersion,
  /** An extra condition on moving an existing stream (UPDATE forms only). */
  guard: RawBuilder<unknown> = sql`true`,
): RawBuilder<unknown> {
  if (expected === 'any') {
    return sql`INSERT INTO es_streams (stream_id, stream_type, stream_position) VALUES (${streamId}, ${streamType}, ${count})
      ON CONFLICT (stream_id) DO UPDATE SET stream_position = es_streams.stream_position + ${count}, updated_at = now()
      RETURNING stream_position`;
  }
  if (expected === 'no_stream' || expected === 0) {
    return sql`INSERT INTO es_streams (stream_id, stream_type, stream_position) VALUES (${streamId}, ${streamType}, ${count})
      ON CONFLICT (stream_id) DO NOTHING
      RETURNING stream_position`;
  }
  if (expected === 'stream_exists') {
    return sql`UPDATE es_streams SET stream_position = stream_position + ${count}, updated_at = now()
      WHERE stream_id = ${streamId} AND ${guard}
      RETURNING stream_position`;
  }
  return sql`UPDATE es_streams SET stream_position = stream_position + ${count}, updated_at = now()
    WHERE stream_id = ${streamId} AND stream_position = ${expected} AND ${guard}
    RETURNING stream_position`;
}

function checkRequestHash(idem: IdempotencyOptions, stored: string | undefined): void {
  if (idem.requestHash !== undefined && stored !== undefined && idem.requestHash !== stored) {
    throw new IdempotencyConflictError(idem.key, stored, idem.requestHash);
  }
}

function validateAppend(
  streamId: string,
  streamType: string,
  events: NewEvent[],
  expected: ExpectedVersion,
): void {
  if (!streamId)
    {throw invalidAppend('streamId', 'must not be empty', 'every event belongs to a stream');}
  if (!streamType)
    {throw invalidAppend('streamType', 'must not be empty', 'the stream type names the aggregate');}
  if (events.length === 0)
    {throw invalidAppend(
      'events',
      'must contain at least 1 event',
      'an append records at least one fact',
    );}
  if (typeof expected === 'number' && (!Number.isSafeInteger(expected) || expected < 0)) {
    throw invalidAppend(
      'expectedVersion',
      'must be an integer >= 0 or any, no_stream, stream_exists',
      `got ${expected}`,
    );
  }
  events.forEach((e, i) => {
    if (!e.type)
      {throw invalidAppend(
        `events[${i}].type`,
        'must not be empty',
        'the event type names the fact',
      );}
    if (
      e.schemaVersion !== undefined &&
      (!Number.isInteger(e.schemaVersion) || e.schemaVersion < 1)
    ) {
      throw invalidAppend(
        `events[${i}].schemaVersion`,
        'must be an integer >= 1',
        `got ${e.schemaVersion}`,
      );
    }
  });
}

import { Kysely, PostgresDialect, type PostgresCursor, type PostgresPool, type PostgresPoolClient, type PostgresQueryResult } from 'kysely';
import { Pool, TypeOverrides, type PoolClient, type PoolConfig } from 'pg';
import { LogWaker } from './log-waker';
import type { EventStoreTables } from './types';

export interface PostgresDbOptions {
  /** Pool size (default 10). */
  max?: number;
  /** Per-statement bound for writers (default 30 s). */
  statementTimeoutMs?: number;
  /**
   * A session idle inside a transaction is killed after this (default 10 s): an abandoned
   * writer otherwise holds the log horizon back for every consumer (a stalled consumer is a classic outbox failure).
   */
  idleInTransactionTimeoutMs?: number;
  applicationName?: string;
  /**
   * Parameterised statements run as named prepared statements, so each connection parses and
   * plans a query text once (default true). See {@link StatementNames}.
   */
  prepareStatements?: boolean;
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/**
 * Type parsers scoped to this pool (not pg's global registry): 64-bit integers and numerics stay
 * decimal strings (positions must not lose precision); xid8 and other unknown types stay text.
 */
function poolTypes(): TypeOverrides {
  const t = new TypeOverrides();
  t.setTypeParser(INT8_OID, 'text', (v: string) => v);
  t.setTypeParser(NUMERIC_OID, 'text', (v: string) => v);
  return t;
}

/** A pool that also closes the process-wide log waker when kysely destroys it. */
class StorePool extends Pool {
  constructor(
    config: PoolConfig,
    readonly waker: LogWaker,
  ) {
    super(config);
  }
  override end(): Promise<void>;
  override end(callback: () => void): void;
  override end(callback?: () => void): Promise<void> | void {
    const done = this.waker.close().then(() => super.end());
    if (!callback) return done;
    done.then(callback, callback);
  }
}

/**
 * Names for the query texts worth preparing. A text is prepared from its second use on (one-off
 * texts, e.g. migrations, never are) and at most `capacity` texts per pool ever are: every name
 * lives on as a prepared statement in each pooled session, so the set must stay small, and texts
 * that vary with their input (IN lists, multi-row VALUES) would otherwise grow it without bound.
 *
 * Why: planning dominates small reads here. The runner lookup (one row, one sub-select) took
 * 0.36 ms as an unnamed statement and 0.11 ms prepared, against 0.15 ms for a bare SELECT by key.
 */
export class StatementNames {
  private readonly names = new Map<string, string>();
  private readonly seenOnce = new Set<string>();
  private issued = 0;

  constructor(private readonly capacity = 128) {}

  nameOf(text: string): string | undefined {
    const named = this.names.get(text);
    if (named !== undefined || this.names.size >= this.capacity) return named;
    if (!this.seenOnce.has(text)) {
      if (this.seenOnce.size >= this.capacity * 8) this.seenOnce.clear();
      this.seenOnce.add(text);
      return undefined;
    }
    this.seenOnce.delete(text);
    const name = `pdk_${++this.issued}`;
    this.names.set(text, name);
    return name;
  }

  /** Drops a text's name; its next use (from the second on) gets a fresh one, planned anew. */
  forget(text: string): void {
    this.names.delete(text);
  }
}

/**
 * A prepared statement whose result columns changed under it (a migration added a column to a
 * table it selects `*` from, e.g. another instance upgrading first) fails with this, on every
 * pooled session that prepared it.
 */
function isStalePlan(e: unknown): boolean {
  return typeof e === 'object' && e !== null && 'code' in e && e.code === '0A000' && 'message' in e && String(e.message).includes('cached plan must not change result type');
}

function isCursor<R>(q: string | PostgresCursor<R>): q is PostgresCursor<R> {
  return typeof q !== 'string';
}

/** kysely's view of a pooled pg client, with parameterised texts sent as named statements. */
class PreparingClient implements PostgresPoolClient {
  constructor(
    private readonly client: PoolClient,
    private readonly names: StatementNames,
  ) {}

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(q: string | PostgresCursor<R>, parameters?: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    // The dialect is built without a cursor class, so kysely never streams through this pool.
    if (isCursor(q)) throw new Error('streaming queries are not configured on this pool');
    const values = parameters ? [...parameters] : [];
    const name = values.length > 0 ? this.names.nameOf(q) : undefined;
    const result =
      name === undefined
        ? this.client.query<R & object>(q, values)
        : this.client.query<R & object>({ name, text: q, values }).catch((e: unknown) => {
            if (!isStalePlan(e)) throw e;
            // Run it unprepared this time, and under a new name from now on.
            this.names.forget(q);
            return this.client.query<R & object>(q, values);
          });
    // pg types `command` as a plain string; kysely narrows it to the verbs Postgres reports.
    return result as Promise<PostgresQueryResult<R>>;
  }

  release(destroy?: boolean): void {
    this.client.release(destroy);
  }
}

/** The pool as kysely sees it: one {@link PreparingClient} per pg client (kysely keys its connections by client). */
class PreparingPool implements PostgresPool {
  private readonly clients = new WeakMap<PoolClient, PreparingClient>();
  private readonly names = new StatementNames();

  constructor(private readonly pool: StorePool) {}

  async connect(): Promise<PostgresPoolClient> {
    const client = await this.pool.connect();
    let wrapped = this.clients.get(client);
    if (!wrapped) {
      wrapped = new PreparingClient(client, this.names);
      this.clients.set(client, wrapped);
    }
    return wrapped;
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}

const wakers = new WeakMap<object, LogWaker>();

/** The waker belonging to a db made by {@link createPostgresDb}, if any. */
export function logWakerOf(db: object): LogWaker | undefined {
  return wakers.get(db);
}

/**
 * kysely over a pg Pool, with writer-safe timeouts and a {@link LogWaker} on its own connection
 * (opened lazily, closed by `db.destroy()`).
 *
 * Generic over the caller's database type: the store only needs a query executor, never the
 * caller's table types, so `Kysely<Database>` from the control plane fits without `any`.
 */
export function createPostgresDb<DB = EventStoreTables>(
  url: string,
  opts: PostgresDbOptions = {},
): Kysely<DB> {
  const waker = new LogWaker({ connectionString: url });
  const pool = new StorePool(
    {
      connectionString: url,
      max: opts.max ?? 10,
      statement_timeout: opts.statementTimeoutMs ?? 30_000,
      idle_in_transaction_session_timeout: opts.idleInTransactionTimeoutMs ?? 10_000,
      application_name: opts.applicationName ?? 'paddock-event-store',
      types: poolTypes(),
    },
    waker,
  );
  // An idle client that dies (server restart, timeout kill) must not crash the process;
  // the next checkout simply gets a fresh connection.
  pool.on('error', () => undefined);
  // A checked-out client idle in a transaction can be killed by idle_in_transaction_session_timeout;
  // pg then emits 'error' on the client itself, which would crash the process without a listener.
  // The next query on it fails normally and the pool discards it on release.
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
  });
  const dialectPool = opts.prepareStatements === false ? pool : new PreparingPool(pool);
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: dialectPool }) });
  wakers.set(db, waker);
  return db;
}

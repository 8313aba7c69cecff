import { Kysely, PostgresDialect } from 'kysely';
import { Pool, TypeOverrides, type PoolConfig } from 'pg';
import { LogWaker } from './log-waker';
import type { EventStoreTables } from './types';

export interface PostgresDbOptions {
  /** Pool size (default 10). */
  max?: number;
  /** Per-statement bound for writers (default 30 s). */
  statementTimeoutMs?: number;
  /**
   * A session idle inside a transaction is killed after this (default 10 s): an abandoned
   * writer otherwise holds the log horizon back for every consumer (RELIABILITY failure mode 2).
   */
  idleInTransactionTimeoutMs?: number;
  applicationName?: string;
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
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  wakers.set(db, waker);
  return db;
}

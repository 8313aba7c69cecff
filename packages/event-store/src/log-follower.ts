import { sql, type Kysely } from 'kysely';
import { readPositions, type LogPosition } from './global-log';
import { LogLoop, type StepOutcome } from './log-loop';
import type { LogWaker } from './log-waker';
import { logWakerOf } from './postgres';
import type { LogCursor } from './types';

export interface LogFollowerOptions {
  /** A view of the log with `transaction_id` and `global_position` columns (see `readPositions`). */
  relation: string;
  /** The view's other columns handed to `handle`. */
  columns: readonly string[];
  /**
   * Where to begin. `'horizon'` (default): the oldest transaction still running when `start()`
   * runs; every row below it is already committed, so a read made after `start()` returns sees
   * its effects, and the follower hands out everything from there on.
   */
  from?: 'horizon' | LogCursor;
  /** Rows per read (default 100). */
  batchSize?: number;
  /** Safety-net poll when no wake-up arrives (default 1000 ms). */
  pollIntervalMs?: number;
  /** Wake-up source; `false` = poll only. Defaults to the waker of a createPostgresDb db. */
  waker?: LogWaker | false;
  /** Handles one batch, in log order; a throw retries the batch (at-least-once). */
  handle(positions: LogPosition[]): void | Promise<void>;
  /** Called for each error (the follower retries). */
  onError?(error: unknown): void;
}

/**
 * A reader of a view of the global log that keeps its cursor in memory and writes nothing, by
 * the same horizon rule as `readAll`. For consumers whose database role may not write (a
 * cluster's controller) and whose effects are idempotent wake-ups: such a consumer re-reads
 * the whole desired state when it starts, then follows the log from the horizon.
 *
 * @example
 * const follower = new LogFollower(db, { relation: 'runner_log', columns: ['runner_uid'], handle: (ps) => wake(ps) });
 * await follower.start(); // then resync everything once
 */
export class LogFollower<DB = unknown> extends LogLoop {
  private cursor: LogCursor = { transactionId: '0', globalPosition: '0' };
  private starting: Promise<void> | undefined;
  readonly stats = { batches: 0, rows: 0, errors: 0, heldReads: 0 };

  constructor(
    private readonly db: Kysely<DB>,
    private readonly opts: LogFollowerOptions,
  ) {
    super(opts.waker === false ? undefined : (opts.waker ?? logWakerOf(db)), opts.pollIntervalMs ?? 1000, (e) => opts.onError?.(e));
  }

  /** Everything up to here has been handed out. */
  get checkpoint(): LogCursor {
    return this.cursor;
  }

  /** Starts following (a no-op when running; concurrent calls share one start). */
  start(): Promise<void> {
    if (this.isRunning) return Promise.resolve();
    this.starting ??= (async () => {
      const from = this.opts.from ?? 'horizon';
      this.cursor = from === 'horizon' ? await currentHorizon(this.db) : from;
      await this.startLoop();
    })().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  protected override countError(): void {
    this.stats.errors++;
  }

  protected async step(): Promise<StepOutcome> {
    const batch = await readPositions(this.db, { relation: this.opts.relation, columns: this.opts.columns, after: this.cursor, limit: this.opts.batchSize ?? 100 });
    if (batch.positions.length > 0) await this.opts.handle(batch.positions);
    this.cursor = batch.cursor;
    if (batch.positions.length > 0) {
      this.stats.batches++;
      this.stats.rows += batch.positions.length;
      return 'progress';
    }
    if (batch.heldBackByHorizon) this.stats.heldReads++;
    return batch.heldBackByHorizon ? 'held' : 'idle';
  }
}

/** The oldest running transaction, as a cursor: nothing can ever be committed below it again. */
async function currentHorizon<DB>(db: Kysely<DB>): Promise<LogCursor> {
  const { rows } = await sql<{ xmin: string }>`SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin`.execute(db);
  const xmin = rows[0]?.xmin;
  if (!xmin) throw new Error('LogFollower: no snapshot horizon');
  return { transactionId: xmin, globalPosition: '0' };
}

import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import { CheckpointConflictError } from './errors';
import { LOG_ORDER, afterCursor, filterSql, readAll, type LogFilter } from './global-log';
import type { LogWaker } from './log-waker';
import { logWakerOf } from './postgres';
import { START_CURSOR, type EventStoreTables, type LogCursor, type RecordedEvent } from './types';

export interface ProcessorOptions<DB> extends LogFilter {
  processorId: string;
  /** Events per transaction (default 100). */
  batchSize?: number;
  /** Safety-net poll when no wake-up arrives (default 1000 ms). */
  pollIntervalMs?: number;
  /** The effect; runs in the same transaction as the checkpoint move. Must not commit itself. */
  handle(trx: Transaction<DB>, events: RecordedEvent[]): Promise<void>;
  /** Instance id used for fencing (default: a random uuid per instance). */
  owner?: string;
  /** Wake-up source; `false` = poll only. Defaults to the waker of a createPostgresDb db. */
  waker?: LogWaker | false;
  /** Called for handler and database errors (the processor retries them) and for the fatal conflict. */
  onError?(error: unknown): void;
}

export interface ProcessorLag {
  /** Age of the oldest committed event this processor has not processed yet (0 when none). */
  lagMs: number;
  /** Committed events wait behind an older open transaction (the horizon). */
  heldBackByHorizon: boolean;
  horizon: string;
  checkpoint: LogCursor;
}

type StepOutcome = 'progress' | 'idle' | 'held';

const MIN_RETRY_MS = 2;

/**
 * An async consumer of the global log. Each batch runs `handle(trx, events)` and moves the
 * checkpoint with compare-and-set in the SAME transaction, so an effect is committed exactly
 * when its checkpoint is (exactly-once effects on top of at-least-once delivery). The CAS also
 * checks `owner`: `start()` takes ownership, and an older instance that wakes up later fails its
 * next CAS with CheckpointConflictError and stops — it can never move the checkpoint back.
 */
export class Processor<DB = EventStoreTables> {
  readonly owner: string;
  private cursor: LogCursor = START_CURSOR;
  private persisted: LogCursor = START_CURSOR;
  private running = false;
  private loop: Promise<void> | undefined;
  private wakeSleeper: (() => void) | undefined;
  private woken = false;
  private unsubscribe: (() => void) | undefined;
  private failure: CheckpointConflictError | undefined;
  private readonly progressWaiters = new Set<() => void>();
  private readonly waker: LogWaker | undefined;
  readonly stats = { batches: 0, events: 0, handlerErrors: 0, emptyReads: 0, heldReads: 0 };

  constructor(
    private readonly db: Kysely<DB>,
    private readonly opts: ProcessorOptions<DB>,
  ) {
    this.owner = opts.owner ?? randomUUID();
    this.waker = opts.waker === false ? undefined : (opts.waker ?? logWakerOf(db));
  }

  /** Everything up to here has been handled (in memory; the durable copy is in es_processors). */
  get checkpoint(): LogCursor {
    return this.cursor;
  }

  /** Why the processor stopped on its own (CheckpointConflictError), if it did. */
  get stoppedBecause(): CheckpointConflictError | undefined {
    return this.failure;
  }

  get isRunning(): boolean {
    return this.running;
  }

  async start(): Promise<void> {
    if (this.running) return;
    // Taking ownership fences any older instance of this processor (its next CAS fails).
    const { rows } = await sql<{ transaction_id: string; global_position: string }>`
      INSERT INTO es_processors (processor_id, owner) VALUES (${this.opts.processorId}, ${this.owner})
      ON CONFLICT (processor_id) DO UPDATE SET owner = EXCLUDED.owner, updated_at = now()
      RETURNING transaction_id::text AS transaction_id, global_position`.execute(this.db);
    const row = rows[0];
    if (!row)
      {throw new Error(`processor ${this.opts.processorId}: could not claim its checkpoint row`);}
    this.cursor = this.persisted = {
      transactionId: row.transaction_id,
      globalPosition: row.global_position,
    };
    this.failure = undefined;
    this.running = true;
    if (this.waker) this.unsubscribe = await this.waker.subscribe(() => this.wake());
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    await this.loop;
    this.loop = undefined;
  }

  /** Resolves once every event committed before this call (and matching the filter) is handled. */
  async whenCaughtUp(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const { rows } = await sql<{
      snap: string;
    }>`SELECT pg_current_snapshot()::text AS snap`.execute(this.db);
    const snap = rows[0]?.snap;
    if (!snap) throw new Error('whenCaughtUp: no snapshot');
    for (;;) {
      if (this.failure) throw this.failure;
      if (!this.running) throw new Error(`processor ${this.opts.processorId} is not running`);
      const pending = await sql<{ pending: boolean }>`
        SELECT EXISTS (
          SELECT 1 FROM es_messages
           WHERE ${afterCursor(this.cursor)} AND ${filterSql(this.opts)}
             AND pg_visible_in_snapshot(transaction_id, ${snap}::pg_snapshot)) AS pending`.execute(
        this.db,
      );
      if (!pending.rows[0]?.pending) return;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(
          `processor ${this.opts.processorId} did not catch up within ${timeoutMs} ms (checkpoint ${JSON.stringify(this.cursor)})`,
        );
      }
      this.wake();
      await this.nextProgress(Math.min(left, 50));
    }
  }

  /** How far behind the processor is, measured in the database's clock. */
  async lag(): Promise<ProcessorLag> {
    const cursor = this.cursor;
    const { rows } = await sql<{ horizon: string; lag_ms: number | null; held_back: boolean }>`
      SELECT h.xmin::text AS horizon,
        (SELECT (EXTRACT(EPOCH FROM clock_timestamp() - created_at) * 1000)::float8 FROM es_messages
          WHERE ${afterCursor(cursor)} AND ${filterSql(this.opts)}
          ORDER BY ${LOG_ORDER} LIMIT 1) AS lag_ms,
        EXISTS (SELECT 1 FROM es_messages
          WHERE transaction_id >= h.xmin AND ${afterCursor(cursor)} AND ${filterSql(this.opts)}) AS held_back
      FROM (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin) h`.execute(this.db);
    const row = rows[0];
    return {
      lagMs: Math.max(0, row?.lag_ms ?? 0),
      heldBackByHorizon: row?.held_back ?? false,
      horizon: row?.horizon ?? '0',
      checkpoint: cursor,
    };
  }

  private async run(): Promise<void> {
    const poll = this.opts.pollIntervalMs ?? 1000;
    let retryMs = MIN_RETRY_MS;
    let consecutiveErrors = 0;
    while (this.running) {
      let outcome: StepOutcome;
      try {
        outcome = await this.step();
      } catch (e) {
        this.opts.onError?.(e);
        if (e instanceof CheckpointConflictError) {
          this.failure = e;
          this.running = false;
          break;
        }
        this.stats.handlerErrors++;
        consecutiveErrors++;
        // Back off a failing batch; commits must not turn the retry into a hot loop, so only
        // stop() interrupts this sleep.
        await this.sleep(Math.min(poll, 10 * 2 ** Math.min(consecutiveErrors, 10)), false);
        continue;
      }
      consecutiveErrors = 0;
      this.notifyProgress();
      if (outcome === 'progress') {
        retryMs = MIN_RETRY_MS;
      } else if (outcome === 'held') {
        // Committed events wait behind an open transaction; its end sends no wake-up when it
        // rolls back, so look again soon (backing off to the poll interval).
        await this.sleep(retryMs);
        retryMs = Math.min(poll, retryMs * 2);
      } else {
        retryMs = MIN_RETRY_MS;
        await this.sleep(poll);
      }
    }
    this.notifyProgress();
  }

  private async step(): Promise<StepOutcome> {
    const batch = await readAll(this.db, {
      after: this.cursor,
      limit: this.opts.batchSize ?? 100,
      ...(this.opts.types ? { types: this.opts.types } : {}),
      ...(this.opts.streamTypes ? { streamTypes: this.opts.streamTypes } : {}),
    });
    if (batch.events.length === 0) {
      // Nothing to handle; the cursor may still jump to the horizon. Kept in memory only: a
      // restart rescans that stretch, which is correct, just not free.
      this.cursor = batch.cursor;
      this.stats.emptyReads++;
      if (batch.heldBackByHorizon) this.stats.heldReads++;
      return batch.heldBackByHorizon ? 'held' : 'idle';
    }
    const from = this.persisted;
    const to = batch.cursor;
    await this.db.transaction().execute(async (trx) => {
      await this.opts.handle(trx, batch.events);
      const moved = await sql`
        UPDATE es_processors
           SET transaction_id = ${to.transactionId}::xid8, global_position = ${to.globalPosition}::bigint, updated_at = now()
         WHERE processor_id = ${this.opts.processorId} AND owner = ${this.owner}
           AND transaction_id = ${from.transactionId}::xid8 AND global_position = ${from.globalPosition}::bigint`.execute(
        trx,
      );
      if (Number(moved.numAffectedRows ?? 0n) !== 1)
        {throw new CheckpointConflictError(this.opts.processorId, this.owner);}
    });
    this.cursor = this.persisted = to;
    this.stats.batches++;
    this.stats.events += batch.events.length;
    return 'progress';
  }

  private wake(): void {
    const sleeper = this.wakeSleeper;
    if (sleeper) {
      this.wakeSleeper = undefined;
      sleeper();
    } else {
      this.woken = true;
    }
  }

  /** Sleeps up to `ms`; a wake-up ends it early when `wakeable`, stop() always does. */
  private sleep(ms: number, wakeable = true): Promise<void> {
    if (!this.running || (wakeable && this.woken)) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wakeSleeper = undefined;
        resolve();
      }, ms);
      const sleeper = (): void => {
        if (!wakeable && this.running) {
          this.wakeSleeper = sleeper; // a commit, not a stop: keep backing off
          return;
        }
        clearTimeout(timer);
        resolve();
      };
      this.wakeSleeper = sleeper;
    });
  }

  private notifyProgress(): void {
    for (const w of this.progressWaiters) w();
    this.progressWaiters.clear();
  }

  private nextProgress(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.progressWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.progressWaiters.add(done);
    });
  }
}

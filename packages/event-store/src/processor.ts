import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import { CheckpointConflictError } from './errors';
import { LOG_ORDER, afterCursor, filterSql, readAll, type LogFilter } from './global-log';
import type { LogWaker } from './log-waker';
import { LogLoop, type StepOutcome } from './log-loop';
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

/**
 * An async consumer of the global log. Each batch runs `handle(trx, events)` and moves the
 * checkpoint with compare-and-set in the SAME transaction, so an effect is committed exactly
 * when its checkpoint is (exactly-once effects on top of at-least-once delivery). The CAS also
 * checks `owner`: `start()` takes ownership, and an older instance that wakes up later fails its
 * next CAS with CheckpointConflictError and stops — it can never move the checkpoint back.
 */
export class Processor<DB = EventStoreTables> extends LogLoop {
  readonly owner: string;
  private cursor: LogCursor = START_CURSOR;
  private persisted: LogCursor = START_CURSOR;
  private failure: CheckpointConflictError | undefined;
  readonly stats = { batches: 0, events: 0, handlerErrors: 0, emptyReads: 0, heldReads: 0 };

  constructor(
    private readonly db: Kysely<DB>,
    private readonly opts: ProcessorOptions<DB>,
  ) {
    super(opts.waker === false ? undefined : (opts.waker ?? logWakerOf(db)), opts.pollIntervalMs ?? 1000, (e) => opts.onError?.(e));
    this.owner = opts.owner ?? randomUUID();
  }

  /** Everything up to here has been handled (in memory; the durable copy is in es_processors). */
  get checkpoint(): LogCursor {
    return this.cursor;
  }

  /** Why the processor stopped on its own (CheckpointConflictError), if it did. */
  get stoppedBecause(): CheckpointConflictError | undefined {
    return this.failure;
  }

  async start(): Promise<void> {
    if (this.isRunning) return;
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
    await this.startLoop();
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
      if (!this.isRunning) throw new Error(`processor ${this.opts.processorId} is not running`);
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

  protected override endsLoop(error: unknown): boolean {
    if (!(error instanceof CheckpointConflictError)) return false;
    this.failure = error;
    return true;
  }

  protected override countError(): void {
    this.stats.handlerErrors++;
  }

  protected async step(): Promise<StepOutcome> {
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
}

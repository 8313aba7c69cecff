import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { EventMetadata, LogCursor, RecordedEvent } from './types';

/** One row of es_messages as pg returns it (int8 and xid8 as strings). */
export interface MessageRow {
  global_position: string;
  transaction_id: string;
  stream_id: string;
  stream_type: string;
  stream_position: string;
  message_id: string;
  message_type: string;
  message_schema_version: number;
  message_data: unknown;
  message_metadata: EventMetadata | null;
  created_at: Date;
}

/**
 * Columns of a message row. No casts here on purpose: `transaction_id::text AS transaction_id`
 * would make a later `ORDER BY transaction_id` sort by the TEXT output column ('1000' < '870'),
 * which silently skipped events (caught by the CP-5 test). pg already returns xid8 and uuid as
 * text, and every ORDER BY below names the table column explicitly.
 */
export const MESSAGE_COLUMNS = sql`global_position, transaction_id, stream_id, stream_type,
  stream_position, message_id, message_type, message_schema_version, message_data,
  message_metadata, created_at`;

/** The log order, always on the table's own columns (never an output alias). */
export const LOG_ORDER = sql`es_messages.transaction_id, es_messages.global_position`;

export function toRecordedEvent(row: MessageRow): RecordedEvent {
  return {
    globalPosition: row.global_position,
    transactionId: row.transaction_id,
    streamId: row.stream_id,
    streamType: row.stream_type,
    streamPosition: Number(row.stream_position),
    messageId: row.message_id,
    type: row.message_type,
    schemaVersion: row.message_schema_version,
    data: row.message_data,
    metadata: row.message_metadata ?? {},
    createdAt: row.created_at,
  };
}

export interface LogFilter {
  types?: string[];
  streamTypes?: string[];
}

export interface ReadAllOptions extends LogFilter {
  after?: LogCursor;
  limit: number;
}

export interface ReadAllResult {
  events: RecordedEvent[];
  /** Where the next read starts (exclusive). Feed it back as `after`. */
  cursor: LogCursor;
  /**
   * pg_snapshot_xmin of the reading statement: every transaction below it has finished, so
   * nothing can ever appear below it again. Rows at or above it are not handed out yet.
   */
  horizon: string;
  /**
   * Committed events exist after the cursor but at or above the horizon: an older transaction
   * that is still open holds them back. Consumers should retry soon; lag grows meanwhile.
   */
  heldBackByHorizon: boolean;
}

/** `(transaction_id, global_position) > cursor` as SQL. */
export function afterCursor(c: LogCursor): RawBuilder<unknown> {
  return sql`(transaction_id, global_position) > (${c.transactionId}::xid8, ${c.globalPosition}::bigint)`;
}

export function filterSql(f: LogFilter): RawBuilder<unknown> {
  const parts: RawBuilder<unknown>[] = [sql`true`];
  if (f.types) parts.push(sql`message_type = ANY(${f.types}::text[])`);
  if (f.streamTypes) parts.push(sql`stream_type = ANY(${f.streamTypes}::text[])`);
  return sql.join(parts, sql` AND `);
}

export function compareCursors(a: LogCursor, b: LogCursor): number {
  const tx = BigInt(a.transactionId) - BigInt(b.transactionId);
  if (tx !== 0n) return tx < 0n ? -1 : 1;
  const gp = BigInt(a.globalPosition) - BigInt(b.globalPosition);
  return gp === 0n ? 0 : gp < 0n ? -1 : 1;
}

interface ReadAllRow extends Partial<MessageRow> {
  horizon: string;
  held_back: boolean;
}

/**
 * Reads the global log after `after`, horizon-safe, in ONE statement: the horizon and the rows
 * come from the same snapshot, so a transaction that commits later with a lower position can
 * never be jumped over (RELIABILITY failure mode 1).
 */
export async function readAll<DB>(db: Kysely<DB>, opts: ReadAllOptions): Promise<ReadAllResult> {
  const after = opts.after ?? { transactionId: '0', globalPosition: '0' };
  const limit = Math.max(1, Math.floor(opts.limit));
  const { rows } = await sql<ReadAllRow>`
    SELECT h.xmin::text AS horizon,
      EXISTS (SELECT 1 FROM es_messages
               WHERE transaction_id >= h.xmin AND ${afterCursor(after)} AND ${filterSql(opts)}) AS held_back,
      m.*
    FROM (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin) h
    LEFT JOIN LATERAL (
      SELECT ${MESSAGE_COLUMNS} FROM es_messages
       WHERE ${afterCursor(after)} AND transaction_id < h.xmin AND ${filterSql(opts)}
       ORDER BY ${LOG_ORDER}
       LIMIT ${limit}
    ) m ON true`.execute(db);
  const first = rows[0];
  if (!first) throw new Error('readAll: the horizon query returned no row');
  const events =
    first.global_position == null ? [] : rows.map((r) => toRecordedEvent(r as MessageRow));
  const last = events[events.length - 1];
  let cursor: LogCursor = last
    ? { transactionId: last.transactionId, globalPosition: last.globalPosition }
    : after;
  if (events.length < limit) {
    // Everything below the horizon after `after` was scanned: no row can ever appear there
    // again, so the cursor may jump to the horizon (keeps filtered consumers from rescanning).
    const atHorizon: LogCursor = { transactionId: first.horizon, globalPosition: '0' };
    if (compareCursors(atHorizon, cursor) > 0) cursor = atHorizon;
  }
  return { events, cursor, horizon: first.horizon, heldBackByHorizon: first.held_back };
}

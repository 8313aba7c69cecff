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

/** The log order, always on the relation's own columns (never an output alias). */
export const LOG_ORDER = logOrder('es_messages');

/** `(transaction_id, global_position)` of `relation`, qualified: the order every log read uses. */
export function logOrder(relation: string): RawBuilder<unknown> {
  return sql`${sql.ref(`${relation}.transaction_id`)}, ${sql.ref(`${relation}.global_position`)}`;
}

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

interface BatchRow {
  horizon: string;
  held_back: boolean;
  global_position: string | null;
  transaction_id: string | null;
}

interface Batch<R> {
  rows: R[];
  cursor: LogCursor;
  horizon: string;
  heldBackByHorizon: boolean;
}

/**
 * Reads `relation` (`es_messages`, or a view of it with the same position columns) after
 * `after`, horizon-safe, in ONE statement: the horizon and the rows come from the same snapshot,
 * so a transaction that commits later with a lower position can never be jumped over.
 */
async function readBatch<DB, R extends { global_position: string; transaction_id: string }>(
  db: Kysely<DB>,
  q: { relation: string; columns: RawBuilder<unknown>; filter: RawBuilder<unknown>; after: LogCursor | undefined; limit: number },
): Promise<Batch<R>> {
  const after = q.after ?? { transactionId: '0', globalPosition: '0' };
  const limit = Math.max(1, Math.floor(q.limit));
  const from = sql.table(q.relation);
  const { rows } = await sql<BatchRow>`
    SELECT h.xmin::text AS horizon,
      EXISTS (SELECT 1 FROM ${from}
               WHERE transaction_id >= h.xmin AND ${afterCursor(after)} AND ${q.filter}) AS held_back,
      m.*
    FROM (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin) h
    LEFT JOIN LATERAL (
      SELECT ${q.columns} FROM ${from}
       WHERE ${afterCursor(after)} AND transaction_id < h.xmin AND ${q.filter}
       ORDER BY ${logOrder(q.relation)}
       LIMIT ${limit}
    ) m ON true`.execute(db);
  const first = rows[0];
  if (!first) throw new Error(`reading ${q.relation}: the horizon query returned no row`);
  const found = first.global_position == null ? [] : (rows as unknown as R[]);
  const last = found[found.length - 1];
  let cursor: LogCursor = last ? { transactionId: last.transaction_id, globalPosition: last.global_position } : after;
  if (found.length < limit) {
    // Everything below the horizon after `after` was scanned: no row can ever appear there
    // again, so the cursor may jump to the horizon (keeps filtered consumers from rescanning).
    const atHorizon: LogCursor = { transactionId: first.horizon, globalPosition: '0' };
    if (compareCursors(atHorizon, cursor) > 0) cursor = atHorizon;
  }
  return { rows: found, cursor, horizon: first.horizon, heldBackByHorizon: first.held_back };
}

/** Reads the global log (`es_messages`, whole events) after `after`, horizon-safe. */
export async function readAll<DB>(db: Kysely<DB>, opts: ReadAllOptions): Promise<ReadAllResult> {
  const batch = await readBatch<DB, MessageRow>(db, { relation: 'es_messages', columns: MESSAGE_COLUMNS, filter: filterSql(opts), after: opts.after, limit: opts.limit });
  return { events: batch.rows.map(toRecordedEvent), cursor: batch.cursor, horizon: batch.horizon, heldBackByHorizon: batch.heldBackByHorizon };
}

/** A row of a log view: its position, and the view's other columns as `pg` returns them. */
export interface LogPosition {
  cursor: LogCursor;
  columns: Record<string, unknown>;
}

export interface ReadPositionsOptions {
  /**
   * A view of the log with `transaction_id` (xid8) and `global_position` (bigint) columns, e.g.
   * one that gives a reader the positions of the events it may see without their payloads.
   */
  relation: string;
  /** The view's other columns to hand back. */
  columns: readonly string[];
  after?: LogCursor;
  limit: number;
}

export interface ReadPositionsResult extends Omit<ReadAllResult, 'events'> {
  positions: LogPosition[];
}

/** Reads a view of the log after `after`, by the same horizon rule as {@link readAll}. */
export async function readPositions<DB>(db: Kysely<DB>, opts: ReadPositionsOptions): Promise<ReadPositionsResult> {
  const columns = sql.join([sql.ref('global_position'), sql.ref('transaction_id'), ...opts.columns.map((c) => sql.ref(c))]);
  const batch = await readBatch<DB, { global_position: string; transaction_id: string } & Record<string, unknown>>(db, {
    relation: opts.relation,
    columns,
    filter: sql`true`,
    after: opts.after,
    limit: opts.limit,
  });
  const positions = batch.rows.map((r) => ({
    cursor: { transactionId: r.transaction_id, globalPosition: r.global_position },
    columns: Object.fromEntries(opts.columns.map((c) => [c, r[c]])),
  }));
  return { positions, cursor: batch.cursor, horizon: batch.horizon, heldBackByHorizon: batch.heldBackByHorizon };
}

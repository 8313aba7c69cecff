import type { ColumnType, Generated, Transaction } from 'kysely';

/** Free-form metadata carried with every event; the well-known keys are typed. */
export interface EventMetadata {
  actor?: string;
  organizationId?: string;
  requestId?: string;
  traceId?: string;
  [key: string]: unknown;
}

/** An event as the caller hands it to `append`. */
export interface NewEvent {
  type: string;
  data: unknown;
  /** Version of the `data` shape, for upcasting; defaults to 1. */
  schemaVersion?: number;
  metadata?: EventMetadata;
  /** uuid; generated when absent. Unique across the whole log. */
  messageId?: string;
}

/** An event as stored in the log. */
export interface RecordedEvent<T = unknown> {
  /** bigint as a decimal string. */
  globalPosition: string;
  /** xid8 of the writing transaction, as a decimal string. */
  transactionId: string;
  streamId: string;
  streamType: string;
  streamPosition: number;
  messageId: string;
  type: string;
  schemaVersion: number;
  data: T;
  metadata: EventMetadata;
  createdAt: Date;
}

/**
 * - a number: the exact current stream position (0 = the stream must not exist yet);
 * - `'any'`: no check;
 * - `'no_stream'`: the stream must not exist;
 * - `'stream_exists'`: the stream must exist, at any position.
 */
export type ExpectedVersion = number | 'any' | 'no_stream' | 'stream_exists';

export interface IdempotencyOptions {
  /** Client-chosen key; the first append under it wins and every retry replays its result. */
  key: string;
  /** Hash of the request body: a retry with the same key but another hash is refused. */
  requestHash?: string;
  /** Stored with the key and returned to retries (e.g. the API response body). */
  result?: unknown;
}

/**
 * `DB` is the caller's database type. The store only touches its own `es_*` tables and writes
 * raw SQL against them, so it never needs to know the caller's tables; being generic lets the
 * control plane pass its own `Transaction<Database>` and get it back in projections unchanged.
 */
export interface AppendOptions<DB = EventStoreTables> {
  expectedVersion: ExpectedVersion;
  idempotency?: IdempotencyOptions;
  /** Append inside the caller's transaction (it commits or rolls back with it). */
  trx?: Transaction<DB>;
}

export interface AppendResult {
  /** The stream's new version (position of its last event). */
  streamPosition: number;
  globalPositions: string[];
  transactionId: string;
  /** True when an idempotency key matched an earlier append: nothing was appended. */
  replayed: boolean;
  /** The stored idempotency result (on replay) or the one just stored. */
  result?: unknown;
}

/** Position in the global log: the pair (transaction id, global position), both decimal strings. */
export interface LogCursor {
  transactionId: string;
  globalPosition: string;
}

export const START_CURSOR: LogCursor = Object.freeze({ transactionId: '0', globalPosition: '0' });

/** Row shapes of the store's own tables (for callers that want typed reads). */
export interface EventStoreTables {
  es_streams: {
    stream_id: string;
    stream_type: string;
    stream_position: ColumnType<string, string | number, string | number>;
    created_at: Generated<Date>;
    updated_at: Generated<Date>;
  };
  es_messages: {
    global_position: Generated<string>;
    stream_id: string;
    stream_type: string;
    stream_position: ColumnType<string, string | number, never>;
    transaction_id: Generated<string>;
    message_id: string;
    message_type: string;
    message_schema_version: number;
    message_data: ColumnType<unknown, string, never>;
    message_metadata: ColumnType<EventMetadata, string, never>;
    created_at: Generated<Date>;
  };
  es_idempotency: {
    key: string;
    stream_id: string;
    request_hash: string | null;
    result: ColumnType<unknown, string | null, string | null>;
    stream_position: ColumnType<string | null, string | number | null, string | number | null>;
    transaction_id: string | null;
    global_positions: ColumnType<string[] | null, string | null, string | null>;
    created_at: Generated<Date>;
  };
  es_processors: {
    processor_id: string;
    transaction_id: string;
    global_position: string;
    owner: string;
    updated_at: Generated<Date>;
  };
}

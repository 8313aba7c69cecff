import { sql, type Kysely } from 'kysely';

/**
 * Version 1 of the store schema (emmett's Postgres layout, with our own table prefix).
 * Raw SQL because xid8 defaults, row-value indexes and partial details read better as DDL.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE es_streams (
      stream_id       text        PRIMARY KEY,
      stream_type     text        NOT NULL,
      stream_position bigint      NOT NULL CHECK (stream_position >= 0),
      created_at      timestamptz NOT NULL DEFAULT now(),
      updated_at      timestamptz NOT NULL DEFAULT now()
    )`.execute(db);

  // transaction_id is what makes the global log safe to tail: global_position comes from a
  // sequence (allocation order), commits happen in another order, so readers stop below the
  // oldest running transaction (pg_snapshot_xmin) and order by (transaction_id, global_position).
  await sql`
    CREATE TABLE es_messages (
      global_position        bigserial   NOT NULL UNIQUE,
      stream_id              text        NOT NULL,
      stream_type            text        NOT NULL,
      stream_position        bigint      NOT NULL,
      transaction_id         xid8        NOT NULL DEFAULT pg_current_xact_id(),
      message_id             uuid        NOT NULL UNIQUE,
      message_type           text        NOT NULL,
      message_schema_version integer     NOT NULL DEFAULT 1,
      message_data           jsonb       NOT NULL,
      message_metadata       jsonb       NOT NULL DEFAULT '{}'::jsonb,
      created_at             timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (stream_id, stream_position)
    )`.execute(db);
  await sql`CREATE INDEX es_messages_log_order ON es_messages (transaction_id, global_position)`.execute(
    db,
  );

  await sql`
    CREATE TABLE es_idempotency (
      key              text        PRIMARY KEY,
      stream_id        text        NOT NULL,
      request_hash     text,
      result           jsonb,
      stream_position  bigint,
      transaction_id   xid8,
      global_positions jsonb,
      created_at       timestamptz NOT NULL DEFAULT now()
    )`.execute(db);

  await sql`
    CREATE TABLE es_processors (
      processor_id    text        PRIMARY KEY,
      transaction_id  xid8        NOT NULL DEFAULT '0',
      global_position bigint      NOT NULL DEFAULT 0,
      owner           text        NOT NULL,
      updated_at      timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE es_processors, es_idempotency, es_messages, es_streams`.execute(db);
}

import { sql, type Kysely } from 'kysely';

// Frozen in time: imports nothing from the app.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // File-system snapshots: the resource and its state. The archive itself is in the runners'
  // snapshot store (object_bucket says which); a row is written before any runner captures.
  await sql`
    CREATE TABLE gw_fs_snapshots (
      id text PRIMARY KEY,
      organization_id text NOT NULL,
      source_sandbox_id text NOT NULL,
      source_volume_name text NOT NULL,
      source_runner_id text NOT NULL,
      trigger text NOT NULL,
      state text NOT NULL,
      state_reason text,
      size_bytes bigint NOT NULL DEFAULT 0,
      object_bucket text NOT NULL DEFAULT '',
      request_id text,
      request_fingerprint text,
      create_time timestamptz NOT NULL,
      complete_time timestamptz,
      updated_at timestamptz NOT NULL
    )`.execute(db);
  await sql`CREATE UNIQUE INDEX gw_fs_snapshots_request ON gw_fs_snapshots (organization_id, request_id) WHERE request_id IS NOT NULL`.execute(db);
  await sql`CREATE INDEX gw_fs_snapshots_source ON gw_fs_snapshots (organization_id, source_sandbox_id, create_time)`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE gw_fs_snapshots`.execute(db);
}

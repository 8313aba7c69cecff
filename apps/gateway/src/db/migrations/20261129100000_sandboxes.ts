import { sql, type Kysely } from 'kysely';

// Frozen in time: imports nothing from the app.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // The gateway's system of record for sandboxes. A row is written (PENDING, runner chosen)
  // before the runner is asked to create it; `id` is the runner's idempotency key.
  await sql`
    CREATE TABLE gw_sandboxes (
      id text PRIMARY KEY,
      organization_id uuid NOT NULL,
      request_id text,
      request_fingerprint text NOT NULL,
      spec jsonb NOT NULL,
      tags text[] NOT NULL DEFAULT '{}',
      state text NOT NULL,
      state_reason text,
      message text,
      exit_code integer,
      state_sequence bigint NOT NULL DEFAULT 0,
      runner_id text NOT NULL,
      runner_group_id text NOT NULL DEFAULT 'default',
      placement jsonb NOT NULL,
      effective jsonb,
      create_attempts integer NOT NULL DEFAULT 0,
      runner_acknowledged boolean NOT NULL DEFAULT false,
      delete_requested_at timestamptz,
      delete_grace_seconds integer NOT NULL DEFAULT 0,
      create_time timestamptz NOT NULL,
      start_time timestamptz,
      end_time timestamptz,
      updated_at timestamptz NOT NULL
    )`.execute(db);
  await sql`CREATE UNIQUE INDEX gw_sandboxes_request ON gw_sandboxes (organization_id, request_id) WHERE request_id IS NOT NULL`.execute(db);
  await sql`CREATE INDEX gw_sandboxes_org_page ON gw_sandboxes (organization_id, create_time, id)`.execute(db);
  await sql`CREATE INDEX gw_sandboxes_active ON gw_sandboxes (updated_at) WHERE state NOT IN ('STATE_COMPLETED', 'STATE_FAILED')`.execute(db);
  await sql`CREATE INDEX gw_sandboxes_runner ON gw_sandboxes (runner_id) WHERE state NOT IN ('STATE_COMPLETED', 'STATE_FAILED')`.execute(db);
  await sql`CREATE INDEX gw_sandboxes_tags ON gw_sandboxes USING gin (tags)`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE gw_sandboxes`.execute(db);
}

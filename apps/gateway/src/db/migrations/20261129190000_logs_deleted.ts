import { sql, type Kysely } from 'kysely';

// Frozen in time: imports nothing from the app.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // DeleteSandboxLogs: when the sandbox's retained logs were destroyed. Log reads answer from here
  // (CWSANDBOX_LOGS_DELETED) without asking a runner, which may be gone by then.
  await sql`ALTER TABLE gw_sandboxes ADD COLUMN logs_deleted_at timestamptz`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE gw_sandboxes DROP COLUMN logs_deleted_at`.execute(db);
}

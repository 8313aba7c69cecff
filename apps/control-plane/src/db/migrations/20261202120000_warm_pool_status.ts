import { sql, type Kysely } from 'kysely';

/**
 * What each runner last reported of its warm pools (heartbeat bookkeeping, like the other
 * `observed_*` columns: not an event). Frozen in time: imports nothing from the app.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE cp_runners ADD COLUMN observed_warm_pool_status jsonb`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE cp_runners DROP COLUMN observed_warm_pool_status`.execute(db);
}

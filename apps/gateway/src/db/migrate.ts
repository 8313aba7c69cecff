import { Migrator, sql, type Kysely, type MigrationProvider, type MigrationResult } from 'kysely';
import { GATEWAY_DB_SCHEMA } from '@paddock/contracts';
import { gatewayMigrations } from './migrations';

/** Own bookkeeping tables, so the gateway's migrations never collide with the control plane's. */
export const GATEWAY_MIGRATION_TABLE = 'gw_migration';
export const GATEWAY_MIGRATION_LOCK_TABLE = 'gw_migration_lock';

const provider: MigrationProvider = { getMigrations: async () => gatewayMigrations };

/**
 * The gateway's schema, before its migrations run. Its role owns it (the control plane's
 * `db-access gateway` command creates it): the role needs no right to create schemas. A role that
 * may (a superuser in development) creates it here. Tables an earlier version created in `public`
 * move into it, data and all, once the gateway owns them (the command hands them over).
 */
async function ensureOwnSchema<T>(db: Kysely<T>): Promise<void> {
  const schema = sql.id(GATEWAY_DB_SCHEMA);
  const { rows } = await sql<{ present: boolean; creatable: boolean }>`
    SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = ${GATEWAY_DB_SCHEMA}) AS present,
           has_database_privilege(current_database(), 'CREATE') AS creatable`.execute(db);
  const state = rows[0];
  if (!state?.present) {
    if (!state?.creatable) {
      throw new Error(
        `the gateway's schema "${GATEWAY_DB_SCHEMA}" does not exist and this role may not create it: ` +
          'create the gateway role with `node apps/control-plane/dist/db-access.js gateway` as a database administrator',
      );
    }
    await sql`CREATE SCHEMA IF NOT EXISTS ${schema}`.execute(db);
  }
  const legacy = await sql<{ t: string }>`
    SELECT c.relname AS t FROM pg_class c
     WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND c.relname LIKE 'gw\\_%'
       AND pg_has_role(c.relowner, 'USAGE')
       AND NOT EXISTS (SELECT 1 FROM pg_class o WHERE o.relnamespace = ${GATEWAY_DB_SCHEMA}::regnamespace AND o.relname = c.relname)`.execute(db);
  for (const { t } of legacy.rows) await sql`ALTER TABLE ${sql.table(`public.${t}`)} SET SCHEMA ${schema}`.execute(db);
}

export async function migrateGatewayToLatest<T>(db: Kysely<T>): Promise<MigrationResult[]> {
  await ensureOwnSchema(db);
  const { error, results } = await new Migrator({
    db,
    provider,
    migrationTableSchema: GATEWAY_DB_SCHEMA,
    migrationTableName: GATEWAY_MIGRATION_TABLE,
    migrationLockTableName: GATEWAY_MIGRATION_LOCK_TABLE,
  }).migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(`gateway migration failed: ${JSON.stringify(error)}`);
  return results ?? [];
}

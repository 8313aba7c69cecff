import { Migrator, type Kysely, type MigrationProvider, type MigrationResult } from 'kysely';
import { gatewayMigrations } from './migrations';

/** Own bookkeeping tables, so the gateway's migrations never collide with the control plane's. */
export const GATEWAY_MIGRATION_TABLE = 'gw_migration';
export const GATEWAY_MIGRATION_LOCK_TABLE = 'gw_migration_lock';

const provider: MigrationProvider = { getMigrations: async () => gatewayMigrations };

export async function migrateGatewayToLatest<T>(db: Kysely<T>): Promise<MigrationResult[]> {
  const { error, results } = await new Migrator({
    db,
    provider,
    migrationTableName: GATEWAY_MIGRATION_TABLE,
    migrationLockTableName: GATEWAY_MIGRATION_LOCK_TABLE,
  }).migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(`gateway migration failed: ${JSON.stringify(error)}`);
  return results ?? [];
}

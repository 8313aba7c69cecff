import { Migrator, type Kysely, type MigrationProvider } from 'kysely';
import { eventStoreMigrations } from './migrations';

const provider: MigrationProvider = { getMigrations: async () => eventStoreMigrations };

/**
 * Brings the store's own tables to the latest version. It keeps its own migration tables
 * (`event_store_migration`, `event_store_migration_lock`) so the app's migrations never
 * interleave with ours.
 */
export async function migrateEventStore<DB>(db: Kysely<DB>): Promise<void> {
  const migrator = new Migrator({
    db,
    provider,
    migrationTableName: 'event_store_migration',
    migrationLockTableName: 'event_store_migration_lock',
  });
  const { error } = await migrator.migrateToLatest();
  if (error)
    {throw error instanceof Error
      ? error
      : new Error('event store migration failed', { cause: error });}
}

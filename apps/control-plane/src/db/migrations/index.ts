import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { migrateEventStore } from '@paddock/event-store';
import * as identity from './20261129090000_identity';
import * as clusters from './20261129090100_clusters';
import * as releases from './20261129090200_releases';
import * as runners from './20261129100000_runners';
import * as publishedViews from './20261201090000_published_views';
import * as warmPoolStatus from './20261202120000_warm_pool_status';
import * as runnersV2View from './20261202120100_runners_v2_view';
import * as secretStores from './20261202090000_secret_stores';
import { applyDatabaseAccess } from '../access/apply-access';

/**
 * Static list (kysely's FileMigrationProvider cannot import .ts under vitest). Names sort by
 * their timestamp prefix; a new migration is added here by hand.
 */
export const controlPlaneMigrations: Record<string, Migration> = {
  '20261129090000_identity': identity,
  '20261129090100_clusters': clusters,
  '20261129090200_releases': releases,
  '20261129100000_runners': runners,
  '20261201090000_published_views': publishedViews,
  '20261202120000_warm_pool_status': warmPoolStatus,
  '20261202120100_runners_v2_view': runnersV2View,
  '20261202090000_secret_stores': secretStores,
};

const provider: MigrationProvider = { getMigrations: async () => controlPlaneMigrations };

/**
 * Runs the event store's own migrations, then the app's. Each keeps its own migration table,
 * so the two histories never interleave. Then gives the installation's gateway and controller
 * roles, where they exist, their privileges on what the migrations publish. Returns the names
 * of the app migrations applied.
 */
export async function migrateControlPlane<DB>(db: Kysely<DB>): Promise<string[]> {
  await migrateEventStore(db);
  const { error, results } = await new Migrator({
    db,
    provider,
    migrationTableName: 'cp_migration',
    migrationLockTableName: 'cp_migration_lock',
  }).migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(`control-plane migration failed: ${JSON.stringify(error)}`);
  await applyDatabaseAccess(db as unknown as Kysely<unknown>);
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import { Pool } from 'pg';
import { CONTROL_PLANE_ENTRY, DB_ACCESS_ENTRY, buildPackages, provisionGatewayRole, startPostgres, type ThrowawayPostgres } from '@paddock/testing';
import { createGatewayDb } from '../src/db/database';
import { GATEWAY_MIGRATION_LOCK_TABLE, GATEWAY_MIGRATION_TABLE, migrateGatewayToLatest } from '../src/db/migrate';
import { gatewayMigrations } from '../src/db/migrations';

/**
 * An installation from before the gateway had a role and a schema of its own: its tables were
 * created in `public` by a gateway connected as the database's superuser. After `db-access
 * gateway`, the gateway (now as its own role) moves them into its schema and loses nothing.
 */
describe('upgrading a database whose gateway tables are in public', () => {
  let pg: ThrowawayPostgres;

  beforeAll(() => buildPackages(['@paddock/control-plane'], [CONTROL_PLANE_ENTRY, DB_ACCESS_ENTRY]), 300_000);
  afterAll(() => pg?.stop());

  it("moves the tables, their rows and the migration history into the gateway's schema, as the gateway's role", async () => {
    pg = await startPostgres();
    const adminUrl = await pg.createDatabase('paddock');
    // The earlier version: the same migrations, run as the superuser, in public.
    const old = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new Pool({ connectionString: adminUrl, max: 1 }) }) });
    try {
      const { error } = await new Migrator({
        db: old,
        provider: { getMigrations: async () => gatewayMigrations },
        migrationTableName: GATEWAY_MIGRATION_TABLE,
        migrationLockTableName: GATEWAY_MIGRATION_LOCK_TABLE,
      }).migrateToLatest();
      expect(error).toBeUndefined();
      await sql`
        INSERT INTO public.gw_sandboxes (id, organization_id, request_fingerprint, spec, state, runner_id, placement, create_time, updated_at)
        VALUES ('kept', gen_random_uuid(), 'x', '{}'::jsonb, 'STATE_COMPLETED', 'r-1', '{}'::jsonb, now(), now())`.execute(old);
    } finally {
      await old.destroy();
    }

    const gatewayUrl = await provisionGatewayRole(adminUrl);
    const gw = createGatewayDb(gatewayUrl, 1);
    try {
      const applied = await migrateGatewayToLatest(gw);
      expect(applied).toEqual([]); // the history moved with the tables: nothing re-runs
      const where = await sql<{ schema: string; table: string }>`
        SELECT schemaname AS schema, tablename AS table FROM pg_tables WHERE tablename LIKE 'gw\\_%' ORDER BY 2`.execute(gw);
      expect(where.rows).toEqual([
        { schema: 'gateway', table: 'gw_fs_snapshots' },
        { schema: 'gateway', table: 'gw_migration' },
        { schema: 'gateway', table: 'gw_migration_lock' },
        { schema: 'gateway', table: 'gw_sandboxes' },
      ]);
      const rows = await gw.selectFrom('gw_sandboxes').select(['id', 'state']).execute();
      expect(rows).toEqual([{ id: 'kept', state: 'STATE_COMPLETED' }]);
      const owner = await sql<{ owner: string; me: string }>`
        SELECT tableowner AS owner, current_user AS me FROM pg_tables WHERE schemaname = 'gateway' AND tablename = 'gw_sandboxes'`.execute(gw);
      expect(owner.rows[0]?.owner).toBe(owner.rows[0]?.me);
    } finally {
      await gw.destroy();
    }
  });
});

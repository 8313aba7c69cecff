import { sql, type Kysely } from 'kysely';

/**
 * `cp_runners_v2`: `cp_runners_v1` plus each runner's warm pools, for controllers to write into
 * the runner's config file. The pools get a column of their own (kept by the projection beside
 * `spec`), so a controller's role is granted them without the rest of the spec. A `security_invoker` view like v1 (the reader's row-level security
 * applies); its grants are applied by `applyDatabaseAccess`. Frozen in time: imports nothing
 * from the app.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE cp_runners ADD COLUMN warm_pools jsonb NOT NULL DEFAULT '[]'::jsonb`.execute(db);
  await sql`UPDATE cp_runners SET warm_pools = COALESCE(spec->'warmPools', '[]'::jsonb)`.execute(db);
  await sql`
    CREATE VIEW cp_runners_v2 WITH (security_invoker = true) AS
    SELECT uid, organization_id, runner_id, cluster_id, zone, runner_group_id, install_status,
           target_revision, target_image, deployment_spec, policy, policy_etag,
           warm_pools
      FROM cp_runners`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP VIEW cp_runners_v2`.execute(db);
  await sql`ALTER TABLE cp_runners DROP COLUMN warm_pools`.execute(db);
}

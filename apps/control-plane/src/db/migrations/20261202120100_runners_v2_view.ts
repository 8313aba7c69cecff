import { sql, type Kysely } from 'kysely';

/**
 * `cp_runners_v2`: `cp_runners_v1` plus each runner's warm pools, for controllers to write into
 * the runner's config file. A `security_invoker` view like v1 (the reader's row-level security
 * applies); its grants are applied by `applyDatabaseAccess`. Frozen in time: imports nothing
 * from the app.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE VIEW cp_runners_v2 WITH (security_invoker = true) AS
    SELECT uid, organization_id, runner_id, cluster_id, zone, runner_group_id, install_status,
           target_revision, target_image, deployment_spec, policy, policy_etag,
           COALESCE(spec->'warmPools', '[]'::jsonb) AS warm_pools
      FROM cp_runners`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP VIEW cp_runners_v2`.execute(db);
}

import { sql, type Kysely } from 'kysely';

/**
 * What other processes may read, published as versioned relations (frozen in time: imports
 * nothing from the app; their shapes are also declared in `@paddock/contracts`
 * `published-views.ts`, and a test compares the two).
 *
 * - `cp_runners_v1` (controllers), `cp_runner_policies_v1` (gateway), `cp_runner_log_v1`
 *   (controllers: log positions and runner uids, no payloads) are `security_invoker` views: the
 *   reader's own privileges and the row-level security of the tables below apply, so a
 *   controller's role sees the rows of its own cluster only, enforced by Postgres.
 * - `cp_token_principal_v1(token_hash)` answers one token lookup with the definer's rights, so
 *   the gateway authenticates tokens without any privilege on `cp_api_tokens`.
 * - `cp_runner_clusters`: the organization and cluster of every runner stream ever created,
 *   kept after the runner is removed, so a controller's scope of the event log still covers
 *   the events of its runners' deletion. Filled by a trigger on `cp_runners` inserts (every
 *   write path creates a runner through that insert) and back-filled here from the log.
 * - `cp_controller_logins`: which database role is the controller of which cluster (written
 *   by the `db-access` command; a controller's role reads its own row only).
 *
 * Row-level security is enabled here; the policies and grants name the installation's roles,
 * so they are applied by `applyDatabaseAccess` (after every migration run, and by the command).
 * The table owner (the control plane) is not subject to row-level security.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE cp_runner_clusters (
      uid uuid PRIMARY KEY,
      stream_id text NOT NULL UNIQUE,
      organization_id text NOT NULL,
      cluster_id text NOT NULL,
      cluster_name text NOT NULL
    )`.execute(db);
  await sql`
    INSERT INTO cp_runner_clusters (uid, stream_id, organization_id, cluster_id, cluster_name)
    SELECT (message_data->>'uid')::uuid, stream_id, message_data->>'organizationId', message_data->>'clusterId', message_data->>'clusterName'
      FROM es_messages
     WHERE stream_type = 'managed_runner' AND message_type = 'RunnerCreated'
    ON CONFLICT DO NOTHING`.execute(db);
  await sql`
    CREATE FUNCTION cp_record_runner_cluster() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO cp_runner_clusters (uid, stream_id, organization_id, cluster_id, cluster_name)
      VALUES (NEW.uid, 'managed_runner-' || NEW.uid::text, NEW.organization_id, NEW.cluster_id, NEW.cluster_name)
      ON CONFLICT (uid) DO NOTHING;
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE TRIGGER cp_runners_record_cluster AFTER INSERT ON cp_runners FOR EACH ROW EXECUTE FUNCTION cp_record_runner_cluster()`.execute(db);

  await sql`
    CREATE TABLE cp_controller_logins (
      role_name name PRIMARY KEY,
      organization_id text NOT NULL,
      cluster_name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);

  await sql`
    CREATE VIEW cp_runners_v1 WITH (security_invoker = true) AS
    SELECT uid, organization_id, runner_id, cluster_id, zone, runner_group_id, install_status,
           target_revision, target_image, deployment_spec, policy, policy_etag
      FROM cp_runners`.execute(db);
  await sql`
    CREATE VIEW cp_runner_policies_v1 WITH (security_invoker = true) AS
    SELECT organization_id, runner_id, policy, policy_etag FROM cp_runners`.execute(db);
  // Positions uncast (xid8, bigint): log readers order by them.
  await sql`
    CREATE VIEW cp_runner_log_v1 WITH (security_invoker = true) AS
    SELECT m.global_position, m.transaction_id, c.uid AS runner_uid
      FROM es_messages m
      JOIN cp_runner_clusters c ON c.stream_id = m.stream_id
     WHERE m.stream_type = 'managed_runner'`.execute(db);

  await sql`
    CREATE FUNCTION cp_token_principal_v1(token_hash text)
    RETURNS TABLE (token_id uuid, organization_id uuid, role text)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
      SELECT t.id, t.organization_id, t.role
        FROM public.cp_api_tokens t
        JOIN public.cp_organizations o ON o.id = t.organization_id
       WHERE t.token_hash = $1 AND t.revoked_at IS NULL
    $$`.execute(db);
  // Functions are executable by PUBLIC unless revoked; this one only by the roles granted it.
  await sql`REVOKE ALL ON FUNCTION cp_token_principal_v1(text) FROM PUBLIC`.execute(db);

  for (const table of ['cp_runners', 'cp_runner_clusters', 'cp_controller_logins', 'es_messages']) {
    await sql`ALTER TABLE ${sql.table(table)} ENABLE ROW LEVEL SECURITY`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['cp_runners', 'es_messages']) {
    await sql`ALTER TABLE ${sql.table(table)} DISABLE ROW LEVEL SECURITY`.execute(db);
  }
  await sql`DROP FUNCTION cp_token_principal_v1(text)`.execute(db);
  await sql`DROP VIEW cp_runner_log_v1, cp_runner_policies_v1, cp_runners_v1`.execute(db);
  await sql`DROP TABLE cp_controller_logins`.execute(db);
  await sql`DROP TRIGGER cp_runners_record_cluster ON cp_runners`.execute(db);
  await sql`DROP FUNCTION cp_record_runner_cluster()`.execute(db);
  await sql`DROP TABLE cp_runner_clusters`.execute(db);
}

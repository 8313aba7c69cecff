import { sql, type Kysely } from 'kysely';

/**
 * Read models of the managed-runner and profile-template streams. Frozen in time: imports nothing
 * from the app (STYLE B.7).
 *
 * - `cp_runners_org_runner_id_uq` / `cp_runners_org_cluster_uq`: the projection is written inside
 *   the append transaction, so these make "runner id unique per organization" and "one runner per
 *   cluster" race-safe (a losing create rolls back its append too).
 * - `cp_runners_org_page_idx`: keyset paging on (create_time, uid) within an organization; the
 *   filter indexes serve `zone`, `clusterId` and `connectionStatus`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE cp_runners (
      uid uuid PRIMARY KEY,
      organization_id text NOT NULL,
      runner_id text NOT NULL,
      zone text NOT NULL,
      cluster_id text NOT NULL,
      cluster_name text NOT NULL,
      runner_group_id text NOT NULL,
      display_name text NOT NULL DEFAULT '',
      spec jsonb NOT NULL,
      policy jsonb,
      policy_revision integer NOT NULL,
      policy_etag text NOT NULL,
      install_status text NOT NULL,
      install_error jsonb,
      connection_status text NOT NULL,
      last_heartbeat_time timestamptz,
      observed_revision integer,
      observed_policy_etag text,
      observed_using_default_policy boolean,
      active_revision integer NOT NULL DEFAULT 0,
      target_revision integer NOT NULL DEFAULT 0,
      target_version text NOT NULL DEFAULT '',
      target_image text NOT NULL DEFAULT '',
      deployment_spec jsonb NOT NULL,
      allow_privileged_profile_annotations boolean NOT NULL DEFAULT false,
      profile_bindings jsonb NOT NULL DEFAULT '[]'::jsonb,
      last_fencing_token bigint NOT NULL DEFAULT 0,
      stream_version integer NOT NULL,
      create_time timestamptz NOT NULL,
      update_time timestamptz NOT NULL
    )`.execute(db);
  await sql`CREATE UNIQUE INDEX cp_runners_org_runner_id_uq ON cp_runners (organization_id, runner_id)`.execute(db);
  await sql`CREATE UNIQUE INDEX cp_runners_org_cluster_uq ON cp_runners (organization_id, cluster_id)`.execute(db);
  await sql`CREATE INDEX cp_runners_org_page_idx ON cp_runners (organization_id, create_time, uid)`.execute(db);
  await sql`CREATE INDEX cp_runners_org_zone_idx ON cp_runners (organization_id, zone, create_time, uid)`.execute(db);
  await sql`CREATE INDEX cp_runners_org_conn_idx ON cp_runners (organization_id, connection_status, create_time, uid)`.execute(db);
  await sql`
    CREATE TABLE cp_profile_templates (
      profile_template_id uuid PRIMARY KEY,
      organization_id text NOT NULL,
      template jsonb NOT NULL,
      create_time timestamptz NOT NULL,
      seq bigserial NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX cp_profile_templates_org_idx ON cp_profile_templates (organization_id, seq)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS cp_profile_templates`.execute(db);
  await sql`DROP TABLE IF EXISTS cp_runners`.execute(db);
}

import { sql, type Kysely } from 'kysely';

// Frozen in time: imports nothing from the app.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE cp_clusters (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES cp_organizations (id) ON DELETE CASCADE,
      name text NOT NULL,
      zone text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT cp_clusters_name_per_org UNIQUE (organization_id, name)
    )`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE cp_clusters`.execute(db);
}

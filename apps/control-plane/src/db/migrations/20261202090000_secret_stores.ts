import { sql, type Kysely } from 'kysely';

/**
 * Organizations' secret stores and their secrets. Values are stored sealed (AES-256-GCM under a
 * key the database never sees), so a database dump or a reader role reveals no secret. No
 * other process reads these tables: the gateway asks the control plane for values over NATS.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE cp_secret_stores (
      id uuid PRIMARY KEY,
      organization_id text NOT NULL,
      name text NOT NULL,
      provider_type text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT cp_secret_stores_name_per_org UNIQUE (organization_id, name)
    )`.execute(db);
  await sql`
    CREATE TABLE cp_secrets (
      store_id uuid NOT NULL REFERENCES cp_secret_stores (id) ON DELETE CASCADE,
      path text NOT NULL,
      sealed text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (store_id, path)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE cp_secrets`.execute(db);
  await sql`DROP TABLE cp_secret_stores`.execute(db);
}

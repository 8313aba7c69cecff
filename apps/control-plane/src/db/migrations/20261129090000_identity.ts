import { sql, type Kysely } from 'kysely';

// Frozen in time: imports nothing from the app. The gateway reads these two tables read-only.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE cp_organizations (
      id uuid PRIMARY KEY,
      name text NOT NULL,
      is_operator boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  // At most one operator organization.
  await sql`CREATE UNIQUE INDEX cp_organizations_one_operator ON cp_organizations (is_operator) WHERE is_operator`.execute(db);
  await sql`
    CREATE TABLE cp_api_tokens (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES cp_organizations (id) ON DELETE CASCADE,
      name text NOT NULL,
      role text NOT NULL CHECK (role IN ('SANDBOX_ADMIN', 'SANDBOX_USER')),
      token_hash text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
      token_prefix text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz,
      last_used_at timestamptz
    )`.execute(db);
  await sql`CREATE INDEX cp_api_tokens_org ON cp_api_tokens (organization_id, created_at)`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE cp_api_tokens`.execute(db);
  await sql`DROP TABLE cp_organizations`.execute(db);
}

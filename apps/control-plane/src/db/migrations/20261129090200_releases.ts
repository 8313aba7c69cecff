import { sql, type Kysely } from 'kysely';

// Frozen in time: imports nothing from the app. The seed rows are part of the migration on
// purpose: a fresh install must have something to roll out on both channels.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE cp_releases (
      revision serial PRIMARY KEY,
      channel text NOT NULL CHECK (channel IN ('RELEASE_CHANNEL_STABLE', 'RELEASE_CHANNEL_RAPID')),
      version text NOT NULL,
      image text NOT NULL,
      published_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT cp_releases_version_per_channel UNIQUE (channel, version)
    )`.execute(db);
  await sql`CREATE INDEX cp_releases_channel_latest ON cp_releases (channel, revision DESC)`.execute(db);
  await sql`
    INSERT INTO cp_releases (channel, version, image, published_at) VALUES
      ('RELEASE_CHANNEL_STABLE', '0.1.0', 'paddock/runner:0.1.0', '2026-10-01T00:00:00Z'),
      ('RELEASE_CHANNEL_RAPID',  '0.1.0', 'paddock/runner:0.1.0', '2026-10-01T00:00:00Z'),
      ('RELEASE_CHANNEL_RAPID',  '0.2.0', 'paddock/runner:0.2.0', '2026-11-01T00:00:00Z'),
      ('RELEASE_CHANNEL_STABLE', '0.2.0', 'paddock/runner:0.2.0', '2026-11-15T00:00:00Z'),
      ('RELEASE_CHANNEL_RAPID',  '0.3.0', 'paddock/runner:0.3.0', '2026-11-20T00:00:00Z')
  `.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE cp_releases`.execute(db);
}

import { sql, type Kysely } from 'kysely';
import seed from './20261129090200_releases.seed.json';

// Frozen in time: imports nothing from the app. The seed rows are part of the migration on
// purpose: a fresh install must have something to roll out on both channels. They live in the
// JSON beside it because `pnpm images` builds the runner images they name from the same list.
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
  await db.insertInto('cp_releases').values(seed).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE cp_releases`.execute(db);
}

import { Kysely, PostgresDialect } from 'kysely';
import { Pool } from 'pg';
import type { TestProject } from 'vitest/node';
import { startPostgres } from '@paddock/testing';
import { migrateControlPlane } from '../../src/db/migrations';

export const TEMPLATE_DATABASE = 'cp_template';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Shared throwaway Postgres of this vitest run: admin URL and a migrated template database. */
    paddockPostgres: { adminUrl: string; template: string } | undefined;
  }
}

/**
 * One Postgres server for the whole run, with the schema migrated once into a template that
 * every test app clones (CREATE DATABASE … TEMPLATE). Each file still gets its own NATS server:
 * the control plane's queue group would otherwise hand one file's heartbeats to another
 * file's app.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const pg = await startPostgres();
  const url = await pg.createDatabase(TEMPLATE_DATABASE);
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new Pool({ connectionString: url, max: 1 }) }) });
  try {
    await migrateControlPlane(db);
  } finally {
    await db.destroy();
  }
  project.provide('paddockPostgres', { adminUrl: pg.adminUrl, template: TEMPLATE_DATABASE });
  return () => pg.stop();
}

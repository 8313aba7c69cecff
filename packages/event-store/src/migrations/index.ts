import type { Migration } from 'kysely';
import * as m0001 from './0001_event_store';

/** Static list (not FileMigrationProvider: its native import() fails under vitest). */
export const eventStoreMigrations: Record<string, Migration> = { '0001_event_store': m0001 };

import type { Migration } from 'kysely';
import * as m20261129100000 from './20261129100000_sandboxes';

/** Static provider list (kysely's file provider cannot import .ts under vitest). */
export const gatewayMigrations: Record<string, Migration> = {
  '20261129100000_sandboxes': m20261129100000,
};

import type { Migration } from 'kysely';
import * as m20261129100000 from './20261129100000_sandboxes';
import * as m20261129190000 from './20261129190000_logs_deleted';
import * as m20261202120000 from './20261202120000_fs_snapshots';

/** Static provider list (kysely's file provider cannot import .ts under vitest). */
export const gatewayMigrations: Record<string, Migration> = {
  '20261129100000_sandboxes': m20261129100000,
  '20261129190000_logs_deleted': m20261129190000,
  '20261202120000_fs_snapshots': m20261202120000,
};

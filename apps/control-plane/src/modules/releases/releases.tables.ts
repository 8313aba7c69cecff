import type { ColumnType, Generated } from 'kysely';

export interface ReleasesTable {
  /** Global, increasing: a runner's target/active revision points here. */
  revision: Generated<number>;
  channel: string;
  version: string;
  image: string;
  published_at: ColumnType<Date, Date | string, never>;
}

export interface ReleasesTables {
  cp_releases: ReleasesTable;
}

import type { ColumnType } from 'kysely';

export interface ClustersTable {
  id: string;
  organization_id: string;
  name: string;
  zone: string;
  created_at: ColumnType<Date, Date | string, never>;
}

export interface ClustersTables {
  cp_clusters: ClustersTable;
}

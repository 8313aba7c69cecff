import { Inject, Injectable } from '@nestjs/common';
import type { Kysely, Selectable } from 'kysely';
import type { CpDatabase } from '../../db/database';
import { KYSELY } from '../../infrastructure/tokens';
import type { ClustersTable } from './clusters.tables';

export type ClusterRow = Selectable<ClustersTable>;

@Injectable()
export class ClustersRepository {
  constructor(@Inject(KYSELY) private readonly db: Kysely<CpDatabase>) {}

  /** Inserts unless the name is taken in the organization; returns the row that now holds the name. */
  async insertOrGet(row: { id: string; organizationId: string; name: string; zone: string; at: Date }): Promise<{ row: ClusterRow; created: boolean }> {
    const inserted = await this.db
      .insertInto('cp_clusters')
      .values({ id: row.id, organization_id: row.organizationId, name: row.name, zone: row.zone, created_at: row.at })
      .onConflict((oc) => oc.constraint('cp_clusters_name_per_org').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (inserted) return { row: inserted, created: true };
    const existing = await this.findByName(row.organizationId, row.name);
    if (!existing) throw new Error(`cluster "${row.name}" vanished between insert and read`);
    return { row: existing, created: false };
  }

  async findById(organizationId: string, id: string): Promise<ClusterRow | undefined> {
    return this.db.selectFrom('cp_clusters').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  }

  async findByName(organizationId: string, name: string): Promise<ClusterRow | undefined> {
    return this.db.selectFrom('cp_clusters').selectAll().where('organization_id', '=', organizationId).where('name', '=', name).executeTakeFirst();
  }

  async list(organizationId: string): Promise<ClusterRow[]> {
    return this.db.selectFrom('cp_clusters').selectAll().where('organization_id', '=', organizationId).orderBy('name').execute();
  }
}

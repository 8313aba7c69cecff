import { Inject, Injectable } from '@nestjs/common';
import type { Kysely, Selectable } from 'kysely';
import type { CpDatabase } from '../../../db/database';
import { KYSELY } from '../../../infrastructure/tokens';
import type { SecretsTable, SecretStoresTable } from '../secret-stores.tables';

export type SecretStoreRow = Selectable<SecretStoresTable>;
export type SecretRow = Selectable<SecretsTable>;
/** A secret's row without its sealed value: what every read path selects. */
export type SecretMetadataRow = Omit<SecretRow, 'sealed'>;

@Injectable()
export class SecretStoresRepository {
  constructor(@Inject(KYSELY) private readonly db: Kysely<CpDatabase>) {}

  /** Inserts the store and its sealed secrets in one transaction; undefined when the name is taken. */
  async insert(store: { id: string; organizationId: string; name: string; providerType: string; at: Date }, secrets: { path: string; sealed: string }[]): Promise<SecretStoreRow | undefined> {
    return this.db.transaction().execute(async (tx) => {
      const row = await tx
        .insertInto('cp_secret_stores')
        .values({ id: store.id, organization_id: store.organizationId, name: store.name, provider_type: store.providerType, created_at: store.at, updated_at: store.at })
        .onConflict((oc) => oc.constraint('cp_secret_stores_name_per_org').doNothing())
        .returningAll()
        .executeTakeFirst();
      if (row && secrets.length) {
        await tx.insertInto('cp_secrets').values(secrets.map((s) => ({ store_id: row.id, path: s.path, sealed: s.sealed, created_at: store.at, updated_at: store.at }))).execute();
      }
      return row;
    });
  }

  async findByName(organizationId: string, name: string): Promise<SecretStoreRow | undefined> {
    return this.db.selectFrom('cp_secret_stores').selectAll().where('organization_id', '=', organizationId).where('name', '=', name).executeTakeFirst();
  }

  async list(organizationId: string): Promise<SecretStoreRow[]> {
    return this.db.selectFrom('cp_secret_stores').selectAll().where('organization_id', '=', organizationId).orderBy('name').execute();
  }

  async secretMetadata(storeIds: string[]): Promise<SecretMetadataRow[]> {
    if (!storeIds.length) return [];
    return this.db.selectFrom('cp_secrets').select(['store_id', 'path', 'created_at', 'updated_at']).where('store_id', 'in', storeIds).orderBy('path').execute();
  }

  /** The sealed values of some paths of one store (the resolve path only). */
  async sealedValues(storeId: string, paths: string[]): Promise<{ path: string; sealed: string }[]> {
    if (!paths.length) return [];
    return this.db.selectFrom('cp_secrets').select(['path', 'sealed']).where('store_id', '=', storeId).where('path', 'in', paths).execute();
  }

  async update(storeId: string, write: { path: string; sealed: string }[], remove: string[], at: Date): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      if (remove.length) await tx.deleteFrom('cp_secrets').where('store_id', '=', storeId).where('path', 'in', remove).execute();
      for (const s of write) {
        await tx
          .insertInto('cp_secrets')
          .values({ store_id: storeId, path: s.path, sealed: s.sealed, created_at: at, updated_at: at })
          .onConflict((oc) => oc.columns(['store_id', 'path']).doUpdateSet({ sealed: s.sealed, updated_at: at }))
          .execute();
      }
      await tx.updateTable('cp_secret_stores').set({ updated_at: at }).where('id', '=', storeId).execute();
    });
  }

  /** Deletes the store (its secrets cascade); false when it did not exist. */
  async delete(organizationId: string, name: string): Promise<boolean> {
    const r = await this.db.deleteFrom('cp_secret_stores').where('organization_id', '=', organizationId).where('name', '=', name).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}

import type { ColumnType } from 'kysely';

export interface SecretStoresTable {
  id: string;
  organization_id: string;
  name: string;
  provider_type: string;
  created_at: ColumnType<Date, Date | string, never>;
  updated_at: ColumnType<Date, Date | string, Date | string>;
}

/** One secret; `sealed` is `SecretCipher.seal`'s output (AES-256-GCM), never the value itself. */
export interface SecretsTable {
  store_id: string;
  path: string;
  sealed: string;
  created_at: ColumnType<Date, Date | string, never>;
  updated_at: ColumnType<Date, Date | string, Date | string>;
}

export interface SecretStoresTables {
  cp_secret_stores: SecretStoresTable;
  cp_secrets: SecretsTable;
}

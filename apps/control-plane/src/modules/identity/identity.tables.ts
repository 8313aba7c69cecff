import type { ColumnType, Generated } from 'kysely';

/**
 * The control plane's own: the gateway reaches them only through the published lookup
 * `cp_token_principal_v1` (see ./README.md).
 */
export interface OrganizationsTable {
  id: string;
  name: string;
  /** The organization created at first start; its admins may call operator endpoints. */
  is_operator: Generated<boolean>;
  created_at: ColumnType<Date, Date | string, never>;
}

export interface ApiTokensTable {
  id: string;
  organization_id: string;
  name: string;
  role: 'SANDBOX_ADMIN' | 'SANDBOX_USER';
  /** sha256 hex of the whole token string; the token itself is never stored. */
  token_hash: string;
  /** First 8 characters (`pdk_` + 4), for display only. */
  token_prefix: string;
  created_at: ColumnType<Date, Date | string, never>;
  revoked_at: ColumnType<Date | null, Date | string | null, Date | string | null>;
  last_used_at: ColumnType<Date | null, Date | string | null, Date | string | null>;
}

export interface IdentityTables {
  cp_organizations: OrganizationsTable;
  cp_api_tokens: ApiTokensTable;
}

import { Inject, Injectable } from '@nestjs/common';
import type { Kysely, Selectable } from 'kysely';
import type { CpDatabase } from '../../db/database';
import { KYSELY } from '../../infrastructure/tokens';
import type { ApiTokensTable, OrganizationsTable } from './identity.tables';

export type ApiTokenRow = Selectable<ApiTokensTable>;
export type OrganizationRow = Selectable<OrganizationsTable>;

export interface TokenLookup {
  id: string;
  organizationId: string;
  name: string;
  role: ApiTokenRow['role'];
  tokenHash: string;
  revoked: boolean;
  operator: boolean;
}

/** Queries only; the rules live in the services. */
@Injectable()
export class IdentityRepository {
  constructor(@Inject(KYSELY) private readonly db: Kysely<CpDatabase>) {}

  async findTokenByHash(hash: string): Promise<TokenLookup | undefined> {
    const row = await this.db
      .selectFrom('cp_api_tokens as t')
      .innerJoin('cp_organizations as o', 'o.id', 't.organization_id')
      .select(['t.id', 't.organization_id', 't.name', 't.role', 't.token_hash', 't.revoked_at', 'o.is_operator'])
      .where('t.token_hash', '=', hash)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      id: row.id,
      organizationId: row.organization_id,
      name: row.name,
      role: row.role,
      tokenHash: row.token_hash,
      revoked: row.revoked_at !== null,
      operator: row.is_operator,
    };
  }

  async insertToken(row: {
    id: string;
    organizationId: string;
    name: string;
    role: ApiTokenRow['role'];
    hash: string;
    prefix: string;
    at: Date;
  }): Promise<ApiTokenRow> {
    return this.db
      .insertInto('cp_api_tokens')
      .values({
        id: row.id,
        organization_id: row.organizationId,
        name: row.name,
        role: row.role,
        token_hash: row.hash,
        token_prefix: row.prefix,
        created_at: row.at,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async listTokens(organizationId: string): Promise<ApiTokenRow[]> {
    return this.db
      .selectFrom('cp_api_tokens')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  async findToken(organizationId: string, id: string): Promise<ApiTokenRow | undefined> {
    return this.db
      .selectFrom('cp_api_tokens')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** Sets revoked_at once; a second revoke keeps the first time. */
  async revokeToken(organizationId: string, id: string, at: Date): Promise<ApiTokenRow | undefined> {
    await this.db
      .updateTable('cp_api_tokens')
      .set({ revoked_at: at })
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .execute();
    return this.findToken(organizationId, id);
  }

  async touchLastUsed(id: string, at: Date): Promise<void> {
    await this.db.updateTable('cp_api_tokens').set({ last_used_at: at }).where('id', '=', id).execute();
  }

  async insertOrganization(row: { id: string; name: string; operator: boolean; at: Date }): Promise<OrganizationRow> {
    return this.db
      .insertInto('cp_organizations')
      .values({ id: row.id, name: row.name, is_operator: row.operator, created_at: row.at })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async findOrganization(id: string): Promise<OrganizationRow | undefined> {
    return this.db.selectFrom('cp_organizations').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async findOperatorOrganization(): Promise<OrganizationRow | undefined> {
    return this.db.selectFrom('cp_organizations').selectAll().where('is_operator', '=', true).executeTakeFirst();
  }
}

import { Injectable } from '@nestjs/common';
import { API_TOKEN_PREFIX_LENGTH, PaddockError, hashApiToken } from '@paddock/contracts';
import { Clock, IdGenerator } from '../../infrastructure/tokens';
import type { Role } from './caller';
import { IdentityRepository, type ApiTokenRow, type OrganizationRow } from './identity.repository';
import { newApiToken } from './token-crypto';
import { TokenVerifier } from './token-verifier';

/** API view of a token: never the secret, never the hash. */
export interface ApiTokenView {
  id: string;
  organizationId: string;
  name: string;
  role: Role;
  tokenPrefix: string;
  createTime: string;
  revokeTime: string | null;
  lastUseTime: string | null;
}

export interface IssuedToken extends ApiTokenView {
  /** Shown exactly once, in the create response. */
  token: string;
}

export interface OrganizationView {
  id: string;
  name: string;
  createTime: string;
}

export function toTokenView(row: ApiTokenRow): ApiTokenView {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    role: row.role,
    tokenPrefix: row.token_prefix,
    createTime: row.created_at.toISOString(),
    revokeTime: row.revoked_at?.toISOString() ?? null,
    lastUseTime: row.last_used_at?.toISOString() ?? null,
  };
}

const toOrganizationView = (row: OrganizationRow): OrganizationView => ({
  id: row.id,
  name: row.name,
  createTime: row.created_at.toISOString(),
});

const isUniqueViolation = (e: unknown): boolean => (e as { code?: string }).code === '23505';

@Injectable()
export class TokensService {
  constructor(
    private readonly repo: IdentityRepository,
    private readonly verifier: TokenVerifier,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  async issue(organizationId: string, name: string, role: Role): Promise<IssuedToken> {
    const { token, hash, prefix } = newApiToken();
    const row = await this.repo.insertToken({ id: this.ids.uuid(), organizationId, name, role, hash, prefix, at: this.clock.now() });
    return { ...toTokenView(row), token };
  }

  async list(organizationId: string): Promise<ApiTokenView[]> {
    return (await this.repo.listTokens(organizationId)).map(toTokenView);
  }

  /** Foreign and unknown ids are both not_found, so ids of other organizations cannot be probed. */
  async revoke(organizationId: string, id: string): Promise<ApiTokenView> {
    const row = await this.repo.revokeToken(organizationId, id, this.clock.now());
    if (!row) throw new PaddockError('not_found', `token "${id}" not found`);
    this.verifier.forgetToken(id);
    return toTokenView(row);
  }

  async get(organizationId: string, id: string): Promise<ApiTokenView> {
    const row = await this.repo.findToken(organizationId, id);
    if (!row) throw new PaddockError('not_found', `token "${id}" not found`);
    return toTokenView(row);
  }

  async organization(id: string): Promise<OrganizationView> {
    const row = await this.repo.findOrganization(id);
    if (!row) throw new PaddockError('not_found', `organization "${id}" not found`);
    return toOrganizationView(row);
  }

  /** A new organization with one admin token (returned once). */
  async createOrganization(name: string): Promise<{ organization: OrganizationView; adminToken: IssuedToken }> {
    const org = await this.repo.insertOrganization({ id: this.ids.uuid(), name, operator: false, at: this.clock.now() });
    const adminToken = await this.issue(org.id, `${name} admin`, 'SANDBOX_ADMIN');
    return { organization: toOrganizationView(org), adminToken };
  }

  /**
   * First-start bootstrap, safe to run on every start and from several replicas at once:
   * ensures the operator organization exists and, when a bootstrap token is configured,
   * that its hash is registered as an admin token there (a revoked one is not revived).
   * Returns a freshly generated token only when the operator organization was just created
   * and no bootstrap token was configured: the caller shows it once.
   */
  async bootstrapOperator(opts: { bootstrapToken?: string; organizationName?: string }): Promise<{
    organizationId: string;
    created: boolean;
    generatedToken?: string;
  }> {
    let org = await this.repo.findOperatorOrganization();
    let created = false;
    if (!org) {
      try {
        org = await this.repo.insertOrganization({
          id: this.ids.uuid(),
          name: opts.organizationName ?? 'default',
          operator: true,
          at: this.clock.now(),
        });
        created = true;
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
        org = await this.repo.findOperatorOrganization();
        if (!org) throw e;
      }
    }
    if (opts.bootstrapToken) {
      const hash = hashApiToken(opts.bootstrapToken);
      if (!(await this.repo.findTokenByHash(hash))) {
        try {
          await this.repo.insertToken({
            id: this.ids.uuid(),
            organizationId: org.id,
            name: 'bootstrap',
            role: 'SANDBOX_ADMIN',
            hash,
            prefix: opts.bootstrapToken.slice(0, API_TOKEN_PREFIX_LENGTH),
            at: this.clock.now(),
          });
        } catch (e) {
          if (!isUniqueViolation(e)) throw e;
        }
      }
      return { organizationId: org.id, created };
    }
    if (!created) return { organizationId: org.id, created };
    const issued = await this.issue(org.id, 'bootstrap', 'SANDBOX_ADMIN');
    return { organizationId: org.id, created, generatedToken: issued.token };
  }
}

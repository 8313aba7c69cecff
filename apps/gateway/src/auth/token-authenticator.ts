import { createHash, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import { PaddockError, RoleSchema, type Role } from '@paddock/contracts';
import type { GatewayDatabase } from '../db/database';

export interface Principal {
  organizationId: string;
  role: Role;
  tokenId: string;
  /**
   * The caller's address (Fastify's `request.ip`: the socket peer, or the forwarded client when
   * `GATEWAY_TRUST_PROXY` trusts the proxy), checked against each runner policy's
   * `controlPlaneAccess.sourceIpAllowlist`. Absent on internal calls, which no allowlist restricts.
   */
  sourceIp?: string;
}

/** `pdk_` + base64url; anything else is refused before the database is asked. */
const TOKEN_SHAPE = /^pdk_[A-Za-z0-9_-]{16,256}$/;
const MAX_CACHED = 10_000;

export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

/**
 * The single error every authentication failure produces (missing, malformed, unknown, revoked,
 * org gone): byte-identical bodies so a caller learns nothing about which it was (GW-7).
 */
export function unauthenticated(): PaddockError {
  return new PaddockError('unauthenticated', 'missing or invalid API token');
}

/**
 * Authenticates bearer tokens against the control plane's `cp_api_tokens` (read-only). Lookups,
 * hits and misses alike, are cached for `cacheMs`: that is the bound on how long a revoked token
 * keeps working, and it keeps auth off the database on the hot path.
 */
export class TokenAuthenticator {
  private readonly cache = new Map<string, { principal: Principal | null; expiresAt: number }>();
  /**
   * Lookups in flight, by token hash: the requests that miss the cache together (a cold start, or
   * every entry's expiry under load) share one query instead of each sending its own.
   */
  private readonly inFlight = new Map<string, Promise<Principal | null>>();
  /** Database lookups made (for tests and metrics). */
  lookups = 0;

  constructor(
    private readonly db: Kysely<GatewayDatabase>,
    private readonly cacheMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Authenticates an HTTP request: its bearer token, and the address it comes from. */
  async authenticateRequest(req: { headers: { authorization?: string | undefined }; ip: string }): Promise<Principal> {
    // A fresh object: the cached principal is shared by every request with the same token.
    return { ...(await this.authenticate(req.headers.authorization)), sourceIp: req.ip };
  }

  async authenticate(authorization: string | undefined): Promise<Principal> {
    const token = parseBearer(authorization);
    if (!token) throw unauthenticated();
    const hash = hashToken(token);
    const principal = await this.lookup(hash);
    if (!principal) throw unauthenticated();
    return principal;
  }

  private lookup(hash: string): Promise<Principal | null> {
    const hit = this.cache.get(hash);
    if (hit && hit.expiresAt > this.now()) return Promise.resolve(hit.principal);
    const pending = this.inFlight.get(hash);
    if (pending) return pending;
    const query = this.query(hash).finally(() => this.inFlight.delete(hash));
    this.inFlight.set(hash, query);
    return query;
  }

  private async query(hash: string): Promise<Principal | null> {
    const t = this.now();
    this.lookups++;
    const row = await this.db
      .selectFrom('cp_api_tokens as t')
      .innerJoin('cp_organizations as o', 'o.id', 't.organization_id')
      .select(['t.id', 't.organization_id', 't.role', 't.token_hash'])
      .where('t.token_hash', '=', hash)
      .where('t.revoked_at', 'is', null)
      .executeTakeFirst();
    const role = RoleSchema.safeParse(row?.role);
    const principal: Principal | null =
      row && role.success && sameHash(row.token_hash, hash) ? { organizationId: row.organization_id, role: role.data, tokenId: row.id } : null;
    if (this.cacheMs > 0) {
      if (this.cache.size >= MAX_CACHED) {
        const oldest = this.cache.keys().next();
        if (!oldest.done) this.cache.delete(oldest.value);
      }
      this.cache.set(hash, { principal, expiresAt: t + this.cacheMs });
    }
    return principal;
  }
}

export function parseBearer(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)$/i.exec(header.trim());
  const token = m?.[1];
  return token && TOKEN_SHAPE.test(token) ? token : null;
}

function sameHash(storedHex: string, computedHex: string): boolean {
  const a = Buffer.from(storedHex, 'hex');
  const b = Buffer.from(computedHex, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

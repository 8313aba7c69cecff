import { sql, type Kysely } from 'kysely';
import { API_TOKEN_PATTERN, CP_TOKEN_PRINCIPAL_V1, PaddockError, hashApiToken, type Role } from '@paddock/contracts';
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

/** Most tokens (hits and misses) remembered at once. */
export const MAX_CACHED_TOKENS = 10_000;

/**
 * The single error every authentication failure produces (missing, malformed, unknown, revoked,
 * org gone): byte-identical bodies so a caller learns nothing about which it was (GW-7).
 */
export function unauthenticated(): PaddockError {
  return new PaddockError('unauthenticated', 'missing or invalid API token');
}

/**
 * Authenticates bearer tokens with the control plane's published lookup `cp_token_principal_v1`
 * (by hash: the gateway's database role cannot read the token table itself).
 *
 * Lookups, hits and misses alike, are cached by the token's hash (never the token itself) for
 * `cacheMs` from the moment the lookup was sent: that is the bound on how long a revoked token
 * keeps working here, since the gateway hears of no revocation (`GATEWAY_AUTH_CACHE_MS`, 0 = ask
 * on every request), and it keeps auth off the database on the hot path. A hit never extends its
 * entry's life. The cache is bounded and evicts the least recently used entry, so a flood of
 * unknown tokens (each a cached miss) pushes out other floods, not the tokens in use.
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
    private readonly maxCached = MAX_CACHED_TOKENS,
  ) {}

  /** Tokens remembered now (for tests and metrics). */
  get cached(): number {
    return this.cache.size;
  }

  /** Authenticates an HTTP request: its bearer token, and the address it comes from. */
  async authenticateRequest(req: { headers: { authorization?: string | undefined }; ip: string }): Promise<Principal> {
    // A fresh object: the cached principal is shared by every request with the same token.
    return { ...(await this.authenticate(req.headers.authorization)), sourceIp: req.ip };
  }

  async authenticate(authorization: string | undefined): Promise<Principal> {
    const token = parseBearer(authorization);
    if (!token) throw unauthenticated();
    const hash = hashApiToken(token);
    const principal = await this.lookup(hash);
    if (!principal) throw unauthenticated();
    return principal;
  }

  private lookup(hash: string): Promise<Principal | null> {
    const hit = this.cache.get(hash);
    if (hit) {
      if (hit.expiresAt > this.now()) {
        // Most recently used goes last (a Map iterates in insertion order): eviction takes the first.
        this.cache.delete(hash);
        this.cache.set(hash, hit);
        return Promise.resolve(hit.principal);
      }
      this.cache.delete(hash);
    }
    const pending = this.inFlight.get(hash);
    if (pending) return pending;
    const query = this.query(hash).finally(() => this.inFlight.delete(hash));
    this.inFlight.set(hash, query);
    return query;
  }

  private async query(hash: string): Promise<Principal | null> {
    const t = this.now();
    this.lookups++;
    const { rows } = await sql<unknown>`SELECT * FROM ${sql.id(CP_TOKEN_PRINCIPAL_V1.name)}(${hash})`.execute(this.db);
    // No row: unknown, revoked or organization gone. A row off its contract is a deployment
    // error (control plane and gateway disagree), not a bad token: it must not read as one.
    const row = rows[0] === undefined ? null : CP_TOKEN_PRINCIPAL_V1.row.parse(rows[0]);
    const principal: Principal | null = row ? { organizationId: row.organization_id, role: row.role, tokenId: row.token_id } : null;
    if (this.cacheMs > 0) {
      this.cache.delete(hash);
      if (this.cache.size >= this.maxCached) {
        const leastRecent = this.cache.keys().next();
        if (!leastRecent.done) this.cache.delete(leastRecent.value);
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
  return token && API_TOKEN_PATTERN.test(token) ? token : null;
}

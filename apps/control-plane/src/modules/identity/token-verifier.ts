import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { Clock } from '../../infrastructure/tokens';
import type { AuthenticatedCaller } from './caller';
import { IdentityRepository } from './identity.repository';
import { API_TOKEN_PATTERN, hashApiToken } from '@paddock/contracts';
import { hashesEqual } from './token-crypto';

interface CacheEntry {
  caller: AuthenticatedCaller | null;
  expiresAt: number;
}

const MAX_CACHE_ENTRIES = 10_000;
/** last_used_at is advisory; writing it on every request would double the write load. */
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Resolves a bearer token to its caller. Verified results (hits and misses) are cached for
 * `tokenCacheTtlMs`, which bounds how late a revocation made on another instance takes effect;
 * a revocation made through this instance is dropped from the cache at once.
 */
@Injectable()
export class TokenVerifier {
  private readonly log = new Logger('TokenVerifier');
  private readonly cache = new Map<string, CacheEntry>();
  private readonly lastTouched = new Map<string, number>();

  constructor(
    private readonly repo: IdentityRepository,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  /** Returns the caller, or undefined for a malformed, unknown or revoked token (indistinguishably). */
  async verify(token: string): Promise<AuthenticatedCaller | undefined> {
    if (!API_TOKEN_PATTERN.test(token)) return undefined;
    const hash = hashApiToken(token);
    const ttl = this.config.tokenCacheTtlMs;
    const now = Date.now();
    if (ttl > 0) {
      const hit = this.cache.get(hash);
      if (hit && hit.expiresAt > now) return hit.caller ?? undefined;
    }
    const row = await this.repo.findTokenByHash(hash);
    const caller: AuthenticatedCaller | null =
      row && !row.revoked && hashesEqual(row.tokenHash, hash)
        ? {
            organizationId: row.organizationId,
            role: row.role,
            tokenId: row.id,
            actor: `token:${row.id}`,
            tokenName: row.name,
            operator: row.operator,
          }
        : null;
    if (ttl > 0) this.remember(hash, { caller, expiresAt: now + ttl });
    if (caller) this.touch(caller.tokenId, now);
    return caller ?? undefined;
  }

  /** Called after a revocation through this instance. */
  forgetToken(tokenId: string): void {
    for (const [hash, entry] of this.cache) {
      if (entry.caller?.tokenId === tokenId) this.cache.delete(hash);
    }
  }

  private remember(hash: string, entry: CacheEntry): void {
    if (this.cache.size >= MAX_CACHE_ENTRIES) {
      // Oldest insertion first: Map iteration order.
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    this.cache.set(hash, entry);
  }

  private touch(tokenId: string, now: number): void {
    const last = this.lastTouched.get(tokenId);
    if (last !== undefined && now - last < LAST_USED_RESOLUTION_MS) return;
    if (this.lastTouched.size >= MAX_CACHE_ENTRIES) this.lastTouched.clear();
    this.lastTouched.set(tokenId, now);
    this.repo.touchLastUsed(tokenId, this.clock.now()).catch((e: unknown) => {
      this.log.warn(`could not record last use of token ${tokenId}: ${String(e)}`);
    });
  }
}

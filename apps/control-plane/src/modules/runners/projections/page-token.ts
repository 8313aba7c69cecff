import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { PaddockError } from '@paddock/contracts';

/** Position after the last item of a page, in the list order (create_time, uid). */
export interface PageCursor {
  createTime: string;
  uid: string;
}

interface TokenPayload {
  v: 1;
  /** Organization the listing belongs to. */
  o: string;
  /** Hash of the normalized filters the listing was started with. */
  f: string;
  t: string;
  u: string;
  /** Issued at, epoch ms. */
  i: number;
}

/** Tokens older than this are refused (a listing should not take a week). */
export const PAGE_TOKEN_MAX_AGE_MS = 24 * 60 * 60 * 1000;

export function filtersHash(filters: Record<string, string | undefined>): string {
  const canonical = Object.keys(filters)
    .sort()
    .map((k) => [k, filters[k] ?? null]);
  return createHash('sha256').update(JSON.stringify(canonical)).digest('base64url').slice(0, 22);
}

function invalidToken(why: string): PaddockError {
  return new PaddockError('invalid_argument', `pageToken is invalid: ${why}; restart the listing without pageToken`, {
    reason: 'PADDOCK_VALIDATION_FAILED',
    violations: [{ field: 'page_token', rule: 'issued_by_this_listing', description: why }],
  });
}

/**
 * Opaque, tamper-evident page tokens: base64url(JSON payload) "." base64url(HMAC-SHA256). The
 * payload binds the token to the organization and the filters, so a token cannot be replayed
 * against another organization or another query; any bit flip fails the MAC.
 */
export class PageTokenCodec {
  constructor(private readonly secret: string) {}

  private mac(payload: string): Buffer {
    return createHmac('sha256', this.secret).update(payload).digest();
  }

  encode(organizationId: string, filters: string, cursor: PageCursor, now: Date): string {
    const payload: TokenPayload = { v: 1, o: organizationId, f: filters, t: cursor.createTime, u: cursor.uid, i: now.getTime() };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.mac(body).toString('base64url')}`;
  }

  decode(token: string, organizationId: string, filters: string, now: Date): PageCursor {
    const [body, sig, ...rest] = token.split('.');
    if (!body || !sig || rest.length > 0) throw invalidToken('malformed token');
    const expected = this.mac(body);
    const given = Buffer.from(sig, 'base64url');
    // Non-canonical base64 (e.g. flipped padding bits) decodes to the same bytes: refuse it too.
    if (given.toString('base64url') !== sig) throw invalidToken('signature mismatch');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidToken('signature mismatch');
    let payload: TokenPayload;
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as TokenPayload;
    } catch {
      throw invalidToken('malformed token');
    }
    if (payload.v !== 1 || typeof payload.t !== 'string' || typeof payload.u !== 'string') throw invalidToken('malformed token');
    if (payload.o !== organizationId) throw invalidToken('issued for another organization');
    if (payload.f !== filters) throw invalidToken('issued for other filters');
    if (now.getTime() - payload.i > PAGE_TOKEN_MAX_AGE_MS) throw invalidToken('expired');
    return { createTime: payload.t, uid: payload.u };
  }
}

import { randomBytes, timingSafeEqual } from 'node:crypto';
import { API_TOKEN_PREFIX_LENGTH, hashApiToken } from '@paddock/contracts';

/** A fresh high-entropy token (32 random bytes, 43 characters of base64url after `pdk_`). */
export function newApiToken(): { token: string; hash: string; prefix: string } {
  const token = `pdk_${randomBytes(32).toString('base64url')}`;
  return { token, hash: hashApiToken(token), prefix: token.slice(0, API_TOKEN_PREFIX_LENGTH) };
}

export function hashesEqual(aHex: string, bHex: string): boolean {
  const a = Buffer.from(aHex, 'hex');
  const b = Buffer.from(bHex, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

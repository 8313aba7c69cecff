import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** `pdk_` + base64url; generated tokens carry 32 random bytes (43 chars). */
export const TOKEN_PATTERN = /^pdk_[A-Za-z0-9_-]{16,128}$/;
export const TOKEN_PREFIX_LENGTH = 8;

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** A fresh high-entropy token; a fast hash is right for it (argon2/bcrypt are for passwords). */
export function newApiToken(): { token: string; hash: string; prefix: string } {
  const token = `pdk_${randomBytes(32).toString('base64url')}`;
  return { token, hash: hashToken(token), prefix: token.slice(0, TOKEN_PREFIX_LENGTH) };
}

export function hashesEqual(aHex: string, bHex: string): boolean {
  const a = Buffer.from(aHex, 'hex');
  const b = Buffer.from(bHex, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

import { hash } from 'node:crypto';

/**
 * API tokens: `pdk_` + 16..128 characters of base64url. Generated tokens carry 32 random bytes
 * (43 characters). Anything else is refused before a database is asked.
 */
export const API_TOKEN_PATTERN = /^pdk_[A-Za-z0-9_-]{16,128}$/;

/** Characters of a token kept in clear (`pdk_` + 4), for display and secret scanning only. */
export const API_TOKEN_PREFIX_LENGTH = 8;

/**
 * What the control plane stores and the gateway looks tokens up by: lowercase hex SHA-256 of the
 * whole token string, `pdk_` included. A fast hash is right for a 256-bit random secret
 * (argon2/bcrypt are for passwords people choose). One-shot `crypto.hash`: the gateway hashes the
 * token of every request it serves, and it costs half of a `createHash` object's round.
 *
 * @example hashApiToken('pdk_' + 'A'.repeat(43)) // 64 hex characters
 */
export function hashApiToken(token: string): string {
  return hash('sha256', token, 'hex');
}

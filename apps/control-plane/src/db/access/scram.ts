import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';

const ITERATIONS = 4096;

/**
 * The SCRAM-SHA-256 verifier Postgres stores for `password` (the format `ALTER ROLE … PASSWORD`
 * accepts pre-hashed). Hashing here means the password itself never reaches the server, so no
 * statement log can record it. `password` must be ASCII (ours are base64url), which SASLprep
 * leaves unchanged.
 */
export function scramVerifier(password: string, salt: Buffer = randomBytes(16), iterations = ITERATIONS): string {
  const salted = pbkdf2Sync(password, salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/** A fresh password for a login role: 32 random bytes, base64url (URL-safe in a connection string). */
export function newRolePassword(): string {
  return randomBytes(32).toString('base64url');
}

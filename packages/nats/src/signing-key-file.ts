import { publicKeyOf } from './installation';
import { readPrivateFile } from './creds';

/**
 * Reads an nkey seed file (a scoped signing key of the account), refusing one that other users
 * can read, and checks that it holds an account-type seed (`SA…`). Returns the seed.
 */
export function readSigningKeyFile(path: string): string {
  const seed = new TextDecoder().decode(readPrivateFile(path, 'NATS signing key file')).trim();
  let ok = false;
  try {
    ok = seed.startsWith('SA') && publicKeyOf(seed).startsWith('A');
  } catch {
    ok = false;
  }
  if (!ok) throw new Error(`${path} does not hold an account signing key seed (an nkey seed starting with "SA")`);
  return seed;
}

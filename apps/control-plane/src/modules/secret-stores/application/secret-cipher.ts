import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM under the installation's secrets key. Each value gets a fresh 96-bit IV, and the
 * store id and path are bound in as associated data, so a sealed value copied onto another
 * secret's row (or another organization's store) fails to open instead of decrypting.
 * Sealed form: `v1.<iv>.<tag>.<ciphertext>`, each base64url.
 */
export class SecretCipher {
  private constructor(private readonly key: Buffer) {}

  /** The key as 32 bytes of base64 (standard or url alphabet); throws a message naming the rule otherwise. */
  static fromBase64(key: string): SecretCipher {
    const bytes = Buffer.from(key, key.includes('-') || key.includes('_') ? 'base64url' : 'base64');
    if (bytes.length !== 32) throw new Error(`PADDOCK_SECRETS_KEY must be 32 bytes in base64 (got ${bytes.length} bytes)`);
    return new SecretCipher(bytes);
  }

  seal(value: string, storeId: string, path: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad(storeId, path));
    const ct = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
  }

  open(sealed: string, storeId: string, path: string): string {
    const [version, iv, tag, ct] = sealed.split('.');
    if (version !== VERSION || iv === undefined || tag === undefined || ct === undefined) throw new Error('sealed secret has an unknown format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
    decipher.setAAD(aad(storeId, path));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  }
}

function aad(storeId: string, path: string): Buffer {
  return Buffer.from(`${storeId}\u0000${path}`, 'utf8');
}

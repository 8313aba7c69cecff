import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { RegistryCredential } from './registry-client';

/** The `auths` section of Docker's config.json / containers-auth.json (what `skopeo login` writes). */
const AuthFileSchema = z.object({
  auths: z.record(z.string(), z.object({ auth: z.string().min(1).optional(), username: z.string().min(1).optional(), password: z.string().optional() })),
});

/** Registry host → credential, from an auth file; a bad file is an error naming it. */
export function readRegistryAuthFile(path: string): Record<string, RegistryCredential> {
  let parsed: z.infer<typeof AuthFileSchema>;
  try {
    parsed = AuthFileSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
  } catch (e) {
    throw new Error(`PADDOCK_REGISTRY_AUTH_FILE ${path}: not a registry auth file ({"auths": {"host": {"auth": "<base64 user:password>"}}}): ${(e as Error).message}`);
  }
  const out: Record<string, RegistryCredential> = {};
  for (const [host, entry] of Object.entries(parsed.auths)) {
    // Docker writes Docker Hub's key as a URL; the other hosts as host[:port].
    const key = host.replace(/^https?:\/\//, '').replace(/\/.*$/, '').replace(/^index\.docker\.io$/, 'docker.io');
    if (entry.auth) {
      const text = Buffer.from(entry.auth, 'base64').toString('utf8');
      const colon = text.indexOf(':');
      if (colon <= 0) throw new Error(`PADDOCK_REGISTRY_AUTH_FILE ${path}: the auth of ${host} is not base64 of user:password`);
      out[key] = { username: text.slice(0, colon), password: text.slice(colon + 1) };
    } else if (entry.username) {
      out[key] = { username: entry.username, password: entry.password ?? '' };
    }
  }
  return out;
}

import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { RegistryCredential } from './registry-client';

/** The `auths` section of Docker's config.json / containers-auth.json (what `skopeo login` writes). */
const AuthFileSchema = z.object({
  auths: z.record(z.string(), z.object({ auth: z.string().min(1).optional(), username: z.string().min(1).optional(), password: z.string().optional() })),
});

/**
 * Registry host → credential, from Docker config JSON text; `source` names where it came from in
 * the error. The errors never quote the text: it holds passwords.
 */
export function parseRegistryAuths(text: string, source: string): Record<string, RegistryCredential> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${source}: not JSON (expected {"auths": {"host": {"auth": "<base64 user:password>"}}})`);
  }
  const r = AuthFileSchema.safeParse(json);
  if (!r.success) {
    const where = r.error.issues[0]?.path.map(String).join('.') ?? '';
    throw new Error(`${source}: not a registry auth file ({"auths": {"host": {"auth": "<base64 user:password>"}}})${where ? `: ${where} is malformed` : ''}`);
  }
  const out: Record<string, RegistryCredential> = {};
  for (const [host, entry] of Object.entries(r.data.auths)) {
    // Docker writes Docker Hub's key as a URL; the other hosts as host[:port].
    const key = host.replace(/^https?:\/\//, '').replace(/\/.*$/, '').replace(/^index\.docker\.io$/, 'docker.io');
    if (entry.auth) {
      const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon <= 0) throw new Error(`${source}: the auth of ${host} is not base64 of user:password`);
      out[key] = { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
    } else if (entry.username) {
      out[key] = { username: entry.username, password: entry.password ?? '' };
    }
  }
  return out;
}

/** Registry host → credential, from an auth file; a bad file is an error naming it. */
export function readRegistryAuthFile(path: string): Record<string, RegistryCredential> {
  return parseRegistryAuths(readFileSync(path, 'utf8'), `PADDOCK_REGISTRY_AUTH_FILE ${path}`);
}

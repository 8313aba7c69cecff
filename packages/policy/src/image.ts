/**
 * Image reference matching for `constraints.image`.
 *
 * - `allowedRegistries` are prefixes matched at a path boundary: `ghcr.io/acme` admits
 *   `ghcr.io/acme/app:1` but not `ghcr.io/acme-evil/app`. A reference without a registry
 *   (`python:3.12`) is also tried in its fully qualified form (`docker.io/library/python:3.12`), so
 *   a `docker.io` prefix admits Docker Hub short names.
 * - `allowedImages` entries match exactly, or, when an entry has no tag or digest, any tag or
 *   digest of that repository (`ghcr.io/acme/app` admits `ghcr.io/acme/app:1.2`).
 * - An entry that pins a digest (`ghcr.io/acme/app@sha256:…`) also admits a tag of that
 *   repository, on condition: the tag must resolve to a pinned digest. Only the runner learns what
 *   a tag resolves to, so the resolved container carries the pins (`imageDigests`) and the runner
 *   checks them once it has the manifest, before anything of the image is unpacked or run.
 */

/** `python:3.12` → `docker.io/library/python:3.12`; `acme/app` → `docker.io/acme/app`. */
export function qualifyImage(ref: string): string {
  const slash = ref.indexOf('/');
  const first = slash < 0 ? '' : ref.slice(0, slash);
  const hasRegistry =
    slash >= 0 && (first.includes('.') || first.includes(':') || first === 'localhost');
  if (hasRegistry) return ref;
  return slash < 0 ? `docker.io/library/${ref}` : `docker.io/${ref}`;
}

function prefixMatches(ref: string, prefix: string): boolean {
  if (prefix.endsWith('/')) return ref.startsWith(prefix);
  if (!ref.startsWith(prefix)) return false;
  const next = ref.charAt(prefix.length);
  return next === '' || next === '/' || next === ':' || next === '@';
}

export function imageAllowedByRegistries(ref: string, prefixes: readonly string[]): boolean {
  const q = qualifyImage(ref);
  for (const p of prefixes) {
    if (prefixMatches(ref, p) || (q !== ref && prefixMatches(q, p))) return true;
  }
  return false;
}

/** Repository part of a reference (without `:tag` / `@digest`). */
export function repositoryOf(ref: string): string {
  const at = ref.indexOf('@');
  const noDigest = at < 0 ? ref : ref.slice(0, at);
  const colon = noDigest.lastIndexOf(':');
  return colon > noDigest.lastIndexOf('/') ? noDigest.slice(0, colon) : noDigest;
}

export function imageAllowedByList(ref: string, allowed: readonly string[]): boolean {
  const q = qualifyImage(ref);
  const repo = repositoryOf(ref);
  const qrepo = repositoryOf(q);
  for (const a of allowed) {
    if (a === ref || a === q) return true;
    const entryHasVersion = repositoryOf(a) !== a;
    if (!entryHasVersion && (a === repo || a === qrepo)) return true;
  }
  return false;
}

/**
 * The digests the policy pins for a by-tag reference's repository (entries `repo@sha256:…`), or
 * an empty list when the reference names a digest or no entry pins its repository. Used only when
 * the reference is not admitted outright.
 */
export function pinnedDigestsFor(ref: string, allowed: readonly string[]): string[] {
  if (ref.includes('@')) return [];
  const repos = new Set([repositoryOf(ref), repositoryOf(qualifyImage(ref))]);
  const out: string[] = [];
  for (const a of allowed) {
    const at = a.indexOf('@');
    if (at < 0) continue;
    if (repos.has(repositoryOf(a)) || repos.has(repositoryOf(qualifyImage(a)))) out.push(a.slice(at + 1));
  }
  return [...new Set(out)];
}

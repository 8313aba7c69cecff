/** A parsed image reference: where to ask (`registry`), for what (`repository`), which version. */
export interface ImageReference {
  /** Host (and port) the reference names, e.g. `127.0.0.1:5000`, `ghcr.io`, `docker.io`. */
  registry: string;
  /** Repository path inside the registry, e.g. `library/python`. */
  repository: string;
  /** Tag, when the reference names one (a digest-only reference has none). */
  tag?: string;
  /** `sha256:<hex>`, when the reference pins one. */
  digest?: string;
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;

/**
 * Parses `[registry/]repository[:tag][@sha256:...]` the way Docker does: the first path component
 * is a registry when it has a dot or a port or is `localhost`; otherwise the reference is Docker
 * Hub's (`python` → `docker.io/library/python`). No tag and no digest means `latest`.
 */
export function parseImageReference(ref: string): ImageReference | undefined {
  let rest = ref;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) return undefined;
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) return undefined;
  }
  const slash = rest.indexOf('/');
  const first = slash < 0 ? '' : rest.slice(0, slash);
  const hasRegistry = slash >= 0 && (first.includes('.') || first.includes(':') || first === 'localhost');
  const registry = hasRegistry ? first : 'docker.io';
  let repository = hasRegistry ? rest.slice(slash + 1) : rest;
  if (registry === 'docker.io' && !repository.includes('/')) repository = `library/${repository}`;
  if (!repository || !repository.split('/').every((c) => COMPONENT.test(c))) return undefined;
  if (!tag && !digest) tag = 'latest';
  return { registry, repository, ...(tag ? { tag } : {}), ...(digest ? { digest } : {}) };
}

/** The host the registry API answers on (Docker Hub's differs from its name). */
export function registryApiHost(registry: string): string {
  return registry === 'docker.io' ? 'registry-1.docker.io' : registry;
}

/** `registry/repository:tag@digest` in full, for messages and cache keys. */
export function formatReference(r: ImageReference): string {
  return `${r.registry}/${r.repository}${r.tag ? `:${r.tag}` : ''}${r.digest ? `@${r.digest}` : ''}`;
}

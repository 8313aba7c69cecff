import { findByPlural, type ResourceType } from '../store/resources';

export type Route =
  | { kind: 'discovery'; path: string }
  | { kind: 'resource'; resource: ResourceType; namespace?: string; name?: string; subresource?: string; watchPath: boolean }
  | { kind: 'unknown' };

const DISCOVERY = [/^\/api\/?$/, /^\/api\/v1\/?$/, /^\/apis\/?$/, /^\/apis\/[^/]+\/?$/, /^\/apis\/[^/]+\/[^/]+\/?$/, /^\/version\/?$/, /^\/(healthz|readyz|livez)$/];

/** Maps a request path to discovery or to a resource (and namespace, name, subresource). */
export function route(pathname: string): Route {
  if (DISCOVERY.some((re) => re.test(pathname))) return { kind: 'discovery', path: pathname.replace(/\/$/, '') };
  const segs = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  let group: string;
  let version: string;
  let rest: string[];
  if (segs[0] === 'api' && segs[1]) {
    group = '';
    version = segs[1];
    rest = segs.slice(2);
  } else if (segs[0] === 'apis' && segs[1] && segs[2]) {
    group = segs[1];
    version = segs[2];
    rest = segs.slice(3);
  } else return { kind: 'unknown' };
  let watchPath = false;
  if (rest[0] === 'watch') {
    watchPath = true;
    rest = rest.slice(1);
  }
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const r = findByPlural(group, version, rest[2] ?? '');
    if (r?.namespaced) {
      return { kind: 'resource', resource: r, namespace: rest[1], ...(rest[3] ? { name: rest[3] } : {}), ...(rest[4] ? { subresource: rest[4] } : {}), watchPath };
    }
  }
  const r = findByPlural(group, version, rest[0] ?? '');
  if (!r || rest.length > 3) return { kind: 'unknown' };
  return { kind: 'resource', resource: r, ...(rest[1] ? { name: rest[1] } : {}), ...(rest[2] ? { subresource: rest[2] } : {}), watchPath };
}

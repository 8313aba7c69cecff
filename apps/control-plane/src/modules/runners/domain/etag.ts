/**
 * The policy etag: an opaque token derived from the runner's uid and its policy revision, so it
 * changes exactly when the policy is replaced (heartbeats, status reports and other settings never
 * move it) and an etag of one runner never matches another runner's.
 */
export function policyEtag(uid: string, policyRevision: number): string {
  return `${fnv1a(`${uid}:${policyRevision}`)}${policyRevision.toString(36).padStart(4, '0')}`;
}

/** 32-bit FNV-1a as 8 hex digits: a short, dependency-free mixer (not a security boundary). */
function fnv1a(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

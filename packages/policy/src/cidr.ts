/**
 * IPv4/IPv6 prefixes as integer intervals, for canonical-form checks and containment
 * ("a declared CIDR must fall inside the union of the allowed ranges minus their exceptions").
 */

export type IpVersion = 4 | 6;

export interface ParsedCidr {
  version: IpVersion;
  prefix: number;
  /** First and last address of the masked prefix. */
  lo: bigint;
  hi: bigint;
  /** `<masked network>/<prefix>` in canonical text (RFC 5952 for IPv6). */
  canonical: string;
  /** The input equals `canonical` (no host bits set, canonical spelling). */
  isCanonical: boolean;
  /** Inside ::ffff:0:0/96 (refused on the policy side). */
  ipv4Mapped: boolean;
}

export interface Interval {
  lo: bigint;
  hi: bigint;
}

/** Dotted quad to a number; no leading zeros (`010` is ambiguous), each octet 0..255. */
function parseIpv4Number(text: string): number | null {
  let n = 0;
  let octet = 0;
  let digits = 0;
  let parts = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 46; /* virtual trailing '.' */
    if (c === 46) {
      if (digits === 0 || parts === 4) return null;
      n = n * 256 + octet;
      parts++;
      octet = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && octet === 0) return null; // leading zero
      octet = octet * 10 + (c - 48);
      if (octet > 255) return null;
      digits++;
    } else return null;
  }
  return parts === 4 ? n : null;
}

function parseIpv4(text: string): bigint | null {
  const n = parseIpv4Number(text);
  return n === null ? null : BigInt(n);
}

const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;

function parseIpv6(text: string): bigint | null {
  if (text.length > 45 || text.includes('%')) return null;
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const parseGroups = (s: string, allowV4Tail: boolean): number[] | null => {
    if (s === '') return [];
    const raw = s.split(':');
    const out: number[] = [];
    for (let i = 0; i < raw.length; i++) {
      const g = raw[i] as string;
      if (allowV4Tail && i === raw.length - 1 && g.includes('.')) {
        const v4 = parseIpv4(g);
        if (v4 === null) return null;
        const x = Number(v4);
        out.push(Math.floor(x / 65536), x % 65536);
      } else {
        if (!HEX_GROUP.test(g)) return null;
        out.push(parseInt(g, 16));
      }
    }
    return out;
  };
  let groups: number[];
  if (halves.length === 2) {
    const head = parseGroups(halves[0] as string, false);
    const tail = parseGroups(halves[1] as string, true);
    if (!head || !tail || head.length + tail.length > 7) return null;
    groups = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  } else {
    const all = parseGroups(text, true);
    if (!all || all.length !== 8) return null;
    groups = all;
  }
  let n = 0n;
  for (const g of groups) n = (n << 16n) | BigInt(g);
  return n;
}

/** Parses a bare address (no prefix length). */
export function parseIp(text: string): { version: IpVersion; value: bigint } | null {
  if (text.includes(':')) {
    const v = parseIpv6(text);
    return v === null ? null : { version: 6, value: v };
  }
  const v = parseIpv4(text);
  return v === null ? null : { version: 4, value: v };
}

export function formatIp(version: IpVersion, value: bigint): string {
  if (version === 4) {
    const n = Number(value);
    return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
  }
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((value >> BigInt(i * 16)) & 0xffffn));
  // RFC 5952: compress the longest run (>= 2) of zero groups, the first one on a tie.
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

const cache = new Map<string, ParsedCidr | null>();

/** Parses `a.b.c.d/n` or `x:y::z/n`; `null` when malformed. Memoized (bounded). */
export function parseCidr(text: string): ParsedCidr | null {
  const hit = cache.get(text);
  if (hit !== undefined) return hit;
  const parsed = parseCidrUncached(text);
  if (cache.size >= 4096) cache.clear();
  cache.set(text, parsed);
  return parsed;
}

function parseCidrUncached(text: string): ParsedCidr | null {
  if (typeof text !== 'string' || text.length > 64) return null;
  const slash = text.indexOf('/');
  if (slash < 0) return null;
  const addr = parseIp(text.slice(0, slash));
  const lenText = text.slice(slash + 1);
  if (!addr || !/^(0|[1-9]\d{0,2})$/.test(lenText)) return null;
  const bits = addr.version === 4 ? 32 : 128;
  const prefix = Number(lenText);
  if (prefix > bits) return null;
  const hostBits = BigInt(bits - prefix);
  const lo = (addr.value >> hostBits) << hostBits;
  const hi = lo | ((1n << hostBits) - 1n);
  const canonical = `${formatIp(addr.version, lo)}/${prefix}`;
  const ipv4Mapped = addr.version === 6 && prefix >= 96 && lo >> 32n === 0xffffn;
  return {
    version: addr.version,
    prefix,
    lo,
    hi,
    canonical,
    isCanonical: canonical === text,
    ipv4Mapped,
  };
}

/** Sorted, merged union of intervals. */
export function mergeIntervals(list: Interval[]): Interval[] {
  if (list.length <= 1) return list.slice();
  const sorted = list.slice().sort((a, b) => (a.lo < b.lo ? -1 : a.lo > b.lo ? 1 : 0));
  const out: Interval[] = [{ ...(sorted[0] as Interval) }];
  for (let i = 1; i < sorted.length; i++) {
    const cur = sorted[i] as Interval;
    const last = out[out.length - 1] as Interval;
    if (cur.lo <= last.hi + 1n) {
      if (cur.hi > last.hi) last.hi = cur.hi;
    } else {
      out.push({ ...cur });
    }
  }
  return out;
}

/** `base` minus every interval of `cuts`. */
export function subtractIntervals(base: Interval[], cuts: Interval[]): Interval[] {
  let cur = base;
  for (const c of cuts) {
    const next: Interval[] = [];
    for (const b of cur) {
      if (c.hi < b.lo || c.lo > b.hi) {
        next.push(b);
        continue;
      }
      if (c.lo > b.lo) next.push({ lo: b.lo, hi: c.lo - 1n });
      if (c.hi < b.hi) next.push({ lo: c.hi + 1n, hi: b.hi });
    }
    cur = next;
  }
  return cur;
}

/** Whether every address of `needed` lies in the union `have` (both lists; `have` need not be merged). */
export function intervalsCover(have: Interval[], needed: Interval[]): boolean {
  if (needed.length === 0) return true;
  const merged = mergeIntervals(have);
  for (const n of needed) {
    let ok = false;
    for (const h of merged) {
      if (h.lo <= n.lo && n.hi <= h.hi) {
        ok = true;
        break;
      }
    }
    if (!ok) return false;
  }
  return true;
}

export const FULL_RANGE: Record<IpVersion, Interval> = {
  4: { lo: 0n, hi: (1n << 32n) - 1n },
  6: { lo: 0n, hi: (1n << 128n) - 1n },
};

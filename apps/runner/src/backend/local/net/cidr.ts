/** An IPv4 block as two unsigned 32-bit bounds (inclusive), kept with the text it came from. */
export interface Ipv4Block {
  text: string;
  first: number;
  last: number;
  prefix: number;
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

export function parseIpv4(addr: string): number | undefined {
  const m = IPV4.exec(addr);
  if (!m) return undefined;
  const octets = m.slice(1, 5).map(Number);
  if (octets.some((o) => o > 255)) return undefined;
  return octets.reduce((acc, o) => acc * 256 + o, 0);
}

export function formatIpv4(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}

/** `a.b.c.d/n` (or a bare address, as /32) → its bounds; undefined when it is not IPv4 CIDR text. */
export function parseIpv4Cidr(text: string): Ipv4Block | undefined {
  const [addr, len, ...rest] = text.split('/');
  if (rest.length > 0 || addr === undefined) return undefined;
  const base = parseIpv4(addr);
  const prefix = len === undefined ? 32 : /^\d{1,2}$/.test(len) ? Number(len) : NaN;
  if (base === undefined || !(prefix >= 0 && prefix <= 32)) return undefined;
  const size = 2 ** (32 - prefix);
  const first = base - (base % size);
  return { text: `${formatIpv4(first)}/${prefix}`, first, last: first + size - 1, prefix };
}

export function isIpv6Text(text: string): boolean {
  return text.includes(':');
}

export function blockContains(outer: Ipv4Block, inner: Ipv4Block): boolean {
  return outer.first <= inner.first && inner.last <= outer.last;
}

export function blocksOverlap(a: Ipv4Block, b: Ipv4Block): boolean {
  return a.first <= b.last && b.first <= a.last;
}

function block(text: string): Ipv4Block {
  const b = parseIpv4Cidr(text);
  if (!b) throw new Error(`bad built-in block ${text}`);
  return b;
}

/**
 * Never reachable from a sandbox, whatever its policy grants: "this network", loopback,
 * link-local (cloud metadata services live at 169.254.169.254), the benchmark range the sandboxes'
 * own links are numbered from, multicast, reserved and broadcast.
 */
export const NEVER_REACHABLE = ['0.0.0.0/8', '127.0.0.0/8', '169.254.0.0/16', '198.18.0.0/15', '224.0.0.0/4', '240.0.0.0/4'].map(block);

/** Private and shared address space: reachable only through a grant that names it. */
export const PRIVATE_RANGES = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10'].map(block);

/** The range the sandboxes' point-to-point links are numbered from (part of NEVER_REACHABLE). */
export const SANDBOX_LINK_RANGE = block('198.18.0.0/15');

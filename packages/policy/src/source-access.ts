import type { FieldViolation, Policy } from '@paddock/contracts';
import { parseCidr, parseIp, type IpVersion } from './cidr';

export const SOURCE_ALLOWLIST_FIELD = 'controlPlaneAccess.sourceIpAllowlist';

/**
 * Sources that are not "public" (for `controlPlaneAccess`): loopback, private, shared
 * (carrier-grade NAT), link-local, unique-local. The allowlist restricts public sources only; an
 * empty list denies every public source.
 */
const NON_PUBLIC = [
  '127.0.0.0/8',
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '100.64.0.0/10',
  '169.254.0.0/16',
  '::1/128',
  'fc00::/7',
  'fe80::/10',
].map((c) => parseCidr(c));

/** An address as Node reports it; `::ffff:a.b.c.d` (IPv4 on a dual-stack socket) is IPv4. */
function parseSource(ip: string): { version: IpVersion; value: bigint } | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return parseIp(mapped?.[1] ?? ip);
}

function inside(addr: { version: IpVersion; value: bigint }, cidr: string): boolean {
  const c = parseCidr(cidr);
  return c !== null && c.version === addr.version && !c.ipv4Mapped && addr.value >= c.lo && addr.value <= c.hi;
}

/**
 * Whether a caller at `sourceIp` may use a runner under `policy`, as the gateway asks at runner
 * selection and before every operation on an existing sandbox. `null` = allowed; otherwise the
 * violation to report. A policy without `controlPlaneAccess.sourceIpAllowlist` restricts nothing;
 * non-public sources are never restricted; an address that cannot be parsed is refused (fail
 * closed: a proxy header the gateway cannot read must not open the door).
 */
export function checkSourceAccess(policy: Policy | null | undefined, sourceIp: string): FieldViolation | null {
  const list = policy?.controlPlaneAccess?.sourceIpAllowlist;
  if (!list) return null;
  const addr = parseSource(sourceIp);
  if (addr && NON_PUBLIC.some((n) => n !== null && n.version === addr.version && addr.value >= n.lo && addr.value <= n.hi)) return null;
  const cidrs = list.cidrs ?? [];
  if (addr && cidrs.some((c) => inside(addr, c))) return null;
  const shown = sourceIp.slice(0, 64);
  return {
    field: SOURCE_ALLOWLIST_FIELD,
    rule: 'source_ip_not_allowed',
    description: cidrs.length
      ? `source address ${shown} is not in the runner policy's ${SOURCE_ALLOWLIST_FIELD} (${cidrs.length} prefix${cidrs.length === 1 ? '' : 'es'})`
      : `the runner policy's ${SOURCE_ALLOWLIST_FIELD} is empty: no public source (here ${shown}) may use it`,
    requested: shown,
    limit: cidrs,
    constraint: SOURCE_ALLOWLIST_FIELD,
  };
}

import type { EgressRule, PortProtocol, TenantScope } from '@paddock/contracts';
import { PORT_PROTOCOLS, TENANT_SCOPES } from '@paddock/contracts';
import { type Interval, type ParsedCidr } from './cidr';
import * as m_cidr from './cidr';
import { CIDR_BLOCK, EGRESS_RULE, INGRESS_RULE, PORT, SELECTOR } from './spec/fields';
import { type Sink } from './violations';
import * as m_violations from './violations';

// Hot-path helpers bound once: transpilers (tsx/esbuild) turn imported names into getter
// calls on every use, which cost ~10% of a resolution. Locals are plain calls.
const { FULL_RANGE, intervalsCover, parseCidr, subtractIntervals } = m_cidr;
const { addViolation, idx, join, joinKey, show, typeName } = m_violations;

/**
 * Network rules on both sides: checking one rule's shape, and containment of a
 * sandbox's declared rule inside a policy envelope. The checker is hand-written (no
 * zod) because it runs on the hot create path for every sandbox.
 */

export type RuleSide =
  | 'allowedEgress'
  | 'defaultEgress'
  | 'sandbox'
  | 'allowedIngress'
  | 'defaultIngress'
  | 'sandboxIngress';
export type PeerKind = 'cidr' | 'httpsHostname' | 'tenant' | 'any' | 'selector';

export interface NormPort {
  protocol: PortProtocol;
  lo: number;
  hi: number;
}

/** A rule after checking: parsed CIDRs, aliases folded, ports as inclusive ranges (empty = all). */
export interface NormRule {
  kind: PeerKind;
  cidr?: ParsedCidr;
  except: ParsedCidr[];
  host?: string;
  hostExcept: string[];
  tenant?: TenantScope;
  podLabels?: Record<string, string>;
  namespaceLabels?: Record<string, string>;
  ports: NormPort[];
  /** The rule as it should be echoed (legacy aliases renamed). */
  rule: EgressRule;
}

// Rule key sets come from the contract's zod schemas (see spec/fields.ts).
const EGRESS_KEYS = EGRESS_RULE.keys;
const INGRESS_KEYS = INGRESS_RULE.keys;
const CIDR_KEYS = CIDR_BLOCK.keys;
const SELECTOR_KEYS = SELECTOR.keys;
const PORT_KEYS = PORT.keys;
const PROTOCOLS = new Set<string>(PORT_PROTOCOLS);
const TENANTS = new Set<string>(TENANT_SCOPES);

export const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const HOST_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** Exact hostname, or one leftmost wildcard label `*.example.com`; bare `*` only where `allowStar`. */
export function isValidHostnamePattern(p: string, allowStar: boolean): boolean {
  if (p === '*') return allowStar;
  const hit = hostnameCache.get(p);
  if (hit !== undefined) return hit;
  const ok = hostnameValid(p);
  if (hostnameCache.size >= 4096) hostnameCache.clear();
  hostnameCache.set(p, ok);
  return ok;
}

/** Memo of hostname-pattern validity (bounded; cleared whole when full). */
const hostnameCache = new Map<string, boolean>();

function hostnameValid(p: string): boolean {
  if (p.length === 0 || p.length > 253) return false;
  const labels = p.toLowerCase().split('.');
  for (let i = 0; i < labels.length; i++) {
    const l = labels[i] as string;
    if (i === 0 && l === '*' && labels.length > 1) continue;
    if (!HOST_LABEL.test(l)) return false;
  }
  return true;
}

/** Whether pattern `p` (exact, `*.suffix`, `*`) matches every host that pattern/host `h` names. */
export function hostPatternCovers(p: string, h: string): boolean {
  if (p === '*') return true;
  const pl = p.toLowerCase();
  const hl = h.toLowerCase();
  if (pl === hl) return true;
  if (pl.startsWith('*.') && !hl.startsWith('*.')) {
    const suffix = pl.slice(1); // ".example.com"
    return (
      hl.endsWith(suffix) &&
      hl.length > suffix.length &&
      !hl.slice(0, hl.length - suffix.length).includes('.')
    );
  }
  return false;
}

/** Whether an exception pattern `e` removes any host named by `h` from an envelope. */
function exceptionHits(e: string, h: string): boolean {
  return hostPatternCovers(e, h) || hostPatternCovers(h, e);
}

function checkStringMap(
  v: unknown,
  path: string,
  sink: Sink,
  minEntries: number,
): Record<string, string> | undefined {
  if (!isObj(v)) {
    addViolation(sink, path, 'type', `expected a map of strings, got ${typeName(v)}`);
    return undefined;
  }
  let n = 0;
  for (const k in v) {
    n++;
    if (typeof v[k] !== 'string') {
      addViolation(
        sink,
        `${path}[${JSON.stringify(k)}]`,
        'type',
        `expected a string, got ${typeName(v[k])}`,
      );
    }
  }
  if (n < minEntries) addViolation(sink, path, 'required', `needs at least ${minEntries} label`);
  return v as Record<string, string>;
}

function checkPorts(v: unknown, path: string, sink: Sink): NormPort[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) {
    addViolation(sink, path, 'type', `expected a list of port ranges, got ${typeName(v)}`);
    return [];
  }
  const out: NormPort[] = [];
  for (let i = 0; i < v.length; i++) {
    const p: unknown = v[i];
    const pp = idx(path, i);
    if (!isObj(p)) {
      addViolation(sink, pp, 'type', `expected a port range object, got ${typeName(p)}`);
      continue;
    }
    for (const k in p) {
      if (!PORT_KEYS.has(k)) {
        addViolation(sink, joinKey(pp, k), 'unknown_field', `unknown field ${show(k)}`);
      }
    }
    let protocol: PortProtocol = 'TCP';
    if (p.protocol !== undefined) {
      if (typeof p.protocol === 'string' && PROTOCOLS.has(p.protocol)) {
        protocol = p.protocol as PortProtocol;
      } else {
        addViolation(
          sink,
          join(pp, 'protocol'),
          'invalid_enum',
          `must be one of TCP, UDP, SCTP, got ${show(p.protocol)}`,
        );
      }
    }
    const port = p.port;
    let ok = true;
    if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
      addViolation(
        sink,
        join(pp, 'port'),
        port === undefined ? 'required' : 'port_range',
        `port must be an integer in 1..65535, got ${show(port)}`,
        { requested: port, limit: '1..65535' },
      );
      ok = false;
    }
    let end = 0;
    if (p.endPort !== undefined) {
      if (
        typeof p.endPort !== 'number' ||
        !Number.isInteger(p.endPort) ||
        p.endPort < 0 ||
        p.endPort > 65535
      ) {
        addViolation(
          sink,
          join(pp, 'endPort'),
          'port_range',
          `endPort must be an integer in 0..65535, got ${show(p.endPort)}`,
          { requested: p.endPort, limit: '0..65535' },
        );
        ok = false;
      } else {
        end = p.endPort;
      }
    }
    if (ok && end !== 0 && end < (port as number)) {
      addViolation(
        sink,
        join(pp, 'endPort'),
        'end_port',
        'end_port must be greater than or equal to port',
        { requested: end, limit: port },
      );
      ok = false;
    }
    if (ok) out.push({ protocol, lo: port as number, hi: end === 0 ? (port as number) : end });
  }
  return out;
}

function checkCidrText(
  v: unknown,
  path: string,
  side: RuleSide,
  sink: Sink,
): ParsedCidr | undefined {
  if (typeof v !== 'string') {
    addViolation(
      sink,
      path,
      v === undefined ? 'required' : 'type',
      `expected a CIDR string, got ${typeName(v)}`,
    );
    return undefined;
  }
  const c = parseCidr(v);
  if (!c) {
    addViolation(sink, path, 'invalid_cidr', `Invalid CIDR ${show(v)}`, { requested: v });
    return undefined;
  }
  const policySide = side !== 'sandbox' && side !== 'sandboxIngress';
  if (policySide && !checkCanonicalCidr(c, v, path, sink)) return undefined;
  return c;
}

/**
 * A policy writes each CIDR in its one canonical form: the plain IPv4 prefix (not IPv4-mapped)
 * and the network address (no host bits), so envelopes compare and display unambiguously.
 */
export function checkCanonicalCidr(c: ParsedCidr, text: string, path: string, sink: Sink): boolean {
  if (c.ipv4Mapped) {
    addViolation(
      sink,
      path,
      'ipv4_mapped_cidr',
      `IPv4-mapped CIDR ${show(text)}: use the plain IPv4 prefix`,
      { requested: text },
    );
    return false;
  }
  if (!c.isCanonical) {
    addViolation(
      sink,
      path,
      'non_canonical_cidr',
      `Non-canonical CIDR ${show(text)}: Use the canonical network prefix "${c.canonical}".`,
      { requested: text, limit: c.canonical },
    );
    return false;
  }
  return true;
}

function checkCidrBlock(
  v: unknown,
  path: string,
  side: RuleSide,
  sink: Sink,
): { cidr?: ParsedCidr; except: ParsedCidr[] } {
  if (!isObj(v)) {
    addViolation(sink, path, 'type', `expected {cidr, except}, got ${typeName(v)}`);
    return { except: [] };
  }
  for (const k in v) {
    if (!CIDR_KEYS.has(k)) {
      addViolation(sink, joinKey(path, k), 'unknown_field', `unknown field ${show(k)}`);
    }
  }
  const cidr = checkCidrText(v.cidr, join(path, 'cidr'), side, sink);
  const except: ParsedCidr[] = [];
  if (v.except !== undefined) {
    if (!Array.isArray(v.except)) {
      addViolation(
        sink,
        join(path, 'except'),
        'type',
        `expected a list of CIDRs, got ${typeName(v.except)}`,
      );
    } else {
      for (let i = 0; i < v.except.length; i++) {
        const ep = idx(join(path, 'except'), i);
        const e = checkCidrText(v.except[i], ep, side, sink);
        if (!e) continue;
        if (cidr && e.version !== cidr.version) {
          addViolation(
            sink,
            ep,
            'invalid_cidr',
            `exception ${show(v.except[i])} is not the same IP family as ${show(v.cidr)}`,
          );
        } else except.push(e);
      }
    }
  }
  return cidr ? { cidr, except } : { except };
}

function checkHostList(v: unknown, path: string, sink: Sink): string[] {
  if (!Array.isArray(v)) {
    addViolation(sink, path, 'type', `expected a list of hostnames, got ${typeName(v)}`);
    return [];
  }
  const out: string[] = [];
  for (let i = 0; i < v.length; i++) {
    const h: unknown = v[i];
    if (typeof h !== 'string' || !isValidHostnamePattern(h, false)) {
      addViolation(sink, idx(path, i), 'invalid_hostname', `invalid hostname pattern ${show(h)}`);
    } else out.push(h);
  }
  return out;
}

/**
 * Checks one egress (or ingress) rule. Returns the normalized rule, or `undefined` when it has an
 * error (already appended to `sink`).
 */
export function checkRule(
  v: unknown,
  path: string,
  side: RuleSide,
  sink: Sink,
): NormRule | undefined {
  const ingress =
    side === 'allowedIngress' || side === 'defaultIngress' || side === 'sandboxIngress';
  if (!isObj(v)) {
    addViolation(sink, path, 'type', `expected a rule object, got ${typeName(v)}`);
    return undefined;
  }
  const before = sink.length;
  const keys = ingress ? INGRESS_KEYS : EGRESS_KEYS;
  for (const k in v) {
    if (!keys.has(k)) {
      addViolation(
        sink,
        joinKey(path, k),
        'unknown_field',
        ingress && EGRESS_KEYS.has(k)
          ? `ingress rules have no ${k} source`
          : `unknown field ${show(k)}`,
      );
    }
  }

  if (v.httpsHostname !== undefined && v.dnsName !== undefined) {
    addViolation(
      sink,
      join(path, 'dnsName'),
      'alias_conflict',
      'cannot set both dnsName and httpsHostname',
    );
  }
  if (v.httpsHostnameExcept !== undefined && v.dnsNameExcept !== undefined) {
    addViolation(
      sink,
      join(path, 'dnsNameExcept'),
      'alias_conflict',
      'cannot set both dnsNameExcept and httpsHostnameExcept',
    );
  }
  const hostKey = v.httpsHostname !== undefined ? 'httpsHostname' : 'dnsName';
  const hostValue = v[hostKey];
  const exceptKey = v.httpsHostnameExcept !== undefined ? 'httpsHostnameExcept' : 'dnsNameExcept';
  const exceptValue = v[exceptKey];

  const peers: PeerKind[] = [];
  if (v.cidr !== undefined) peers.push('cidr');
  if (!ingress && hostValue !== undefined) peers.push('httpsHostname');
  if (v.tenant !== undefined) peers.push('tenant');
  if (v.any !== undefined) peers.push('any');
  if (!ingress && v.selector !== undefined) peers.push('selector');
  if (peers.length !== 1) {
    addViolation(
      sink,
      path,
      'exactly_one_peer',
      ingress
        ? 'each ingress rule must select exactly one source'
        : 'each egress rule must select exactly one destination',
      {
        requested: peers,
      },
    );
    return undefined;
  }
  const kind = peers[0] as PeerKind;
  const out: NormRule = {
    kind,
    except: [],
    hostExcept: [],
    ports: checkPorts(v.ports, join(path, 'ports'), sink),
    rule: {},
  };
  const rule: EgressRule = {};
  switch (kind) {
    case 'cidr': {
      const b = checkCidrBlock(v.cidr, join(path, 'cidr'), side, sink);
      if (b.cidr) out.cidr = b.cidr;
      out.except = b.except;
      rule.cidr = v.cidr as EgressRule['cidr'];
      break;
    }
    case 'httpsHostname': {
      const hp = join(path, hostKey);
      if (typeof hostValue !== 'string') {
        addViolation(sink, hp, 'type', `expected a hostname string, got ${typeName(hostValue)}`);
      } else if (!isValidHostnamePattern(hostValue, side === 'allowedEgress')) {
        addViolation(
          sink,
          hp,
          'invalid_hostname',
          hostValue === '*'
            ? 'the bare wildcard "*" is allowed only in a policy allowedEgress'
            : `invalid hostname pattern ${show(hostValue)}: use an exact name or one leftmost wildcard label (*.example.com)`,
          { requested: hostValue },
        );
      } else {
        out.host = hostValue.toLowerCase();
        rule.httpsHostname = hostValue;
      }
      if (side === 'defaultEgress') {
        addViolation(
          sink,
          hp,
          'default_egress_hostname',
          'default_egress must not contain DNS-name destinations',
        );
      }
      if (side === 'sandbox') {
        const p = out.ports;
        const only443 =
          p.length === 0 ||
          (p.length === 1 && p[0]?.protocol === 'TCP' && p[0].lo === 443 && p[0].hi === 443);
        if (!only443) {
          addViolation(
            sink,
            join(path, 'ports'),
            'https_hostname_ports',
            'an httpsHostname rule grants HTTPS only: ports must be empty or exactly TCP 443',
            { requested: v.ports },
          );
        }
      }
      break;
    }
    case 'tenant': {
      if (typeof v.tenant !== 'string' || !TENANTS.has(v.tenant)) {
        addViolation(
          sink,
          join(path, 'tenant'),
          'invalid_enum',
          `must be one of ${TENANT_SCOPES.join(', ')}, got ${show(v.tenant)}`,
        );
      } else {
        out.tenant = v.tenant as TenantScope;
        rule.tenant = out.tenant;
        if (ingress && v.tenant === 'TENANT_SCOPE_SANDBOX_NETWORK') {
          addViolation(
            sink,
            join(path, 'tenant'),
            'tenant_scope_unsupported',
            'TENANT_SCOPE_SANDBOX_NETWORK ingress is not enforceable until networkIds enforcement exists',
          );
        }
      }
      break;
    }
    case 'any': {
      if (v.any !== true) {
        addViolation(
          sink,
          join(path, 'any'),
          'invalid_value',
          `any must be true when set, got ${show(v.any)}`,
        );
      } else rule.any = true;
      break;
    }
    case 'selector': {
      const sp = join(path, 'selector');
      if (!isObj(v.selector)) {
        addViolation(
          sink,
          sp,
          'type',
          `expected {podLabels, namespaceLabels}, got ${typeName(v.selector)}`,
        );
        break;
      }
      for (const k in v.selector) {
        if (!SELECTOR_KEYS.has(k)) {
          addViolation(sink, joinKey(sp, k), 'unknown_field', `unknown field ${show(k)}`);
        }
      }
      const pod = checkStringMap(v.selector.podLabels, join(sp, 'podLabels'), sink, 1);
      if (pod) out.podLabels = pod;
      if (v.selector.namespaceLabels !== undefined) {
        const ns = checkStringMap(v.selector.namespaceLabels, join(sp, 'namespaceLabels'), sink, 1);
        if (ns) out.namespaceLabels = ns;
      }
      rule.selector = v.selector as EgressRule['selector'];
      break;
    }
  }
  if (exceptValue !== undefined) {
    const ep = join(path, exceptKey);
    if (side === 'sandbox') {
      addViolation(
        sink,
        ep,
        'https_hostname_except_on_sandbox',
        'httpsHostnameExcept is valid only in a policy allowedEgress envelope',
      );
    } else if (side !== 'allowedEgress') {
      addViolation(sink, ep, 'invalid_value', 'httpsHostnameExcept is valid only in allowedEgress');
    } else if (kind !== 'httpsHostname' && kind !== 'any') {
      addViolation(
        sink,
        ep,
        'invalid_value',
        'httpsHostnameExcept applies only to an httpsHostname or any rule',
      );
    } else {
      out.hostExcept = checkHostList(exceptValue, ep, sink);
      rule.httpsHostnameExcept = out.hostExcept;
    }
  }
  if (v.ports !== undefined) rule.ports = v.ports as EgressRule['ports'];
  out.rule = rule;
  return sink.length === before ? out : undefined;
}

/** Checks a list of rules; returns the normalized ones (bad ones are reported and dropped). */
export function checkRules(v: unknown, path: string, side: RuleSide, sink: Sink): NormRule[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) {
    addViolation(sink, path, 'type', `expected a list of rules, got ${typeName(v)}`);
    return [];
  }
  const out: NormRule[] = [];
  for (let i = 0; i < v.length; i++) {
    const r = checkRule(v[i], idx(path, i), side, sink);
    if (r) out.push(r);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Containment
// ---------------------------------------------------------------------------------------------

const ALL_PROTOCOLS: readonly PortProtocol[] = PORT_PROTOCOLS;

const portMatches = (ports: NormPort[], protocol: PortProtocol, port: number): boolean => {
  if (ports.length === 0) return true;
  for (const p of ports) if (p.protocol === protocol && p.lo <= port && port <= p.hi) return true;
  return false;
};

/**
 * Splits the declared port space into segments on which the set of applicable envelope rules is
 * constant, and asks `coveredAt` for each segment's applicable rules.
 */
function everySegment(
  declared: NormPort[],
  envelope: NormRule[],
  coveredAt: (rules: NormRule[]) => boolean,
): boolean {
  const ranges: NormPort[] = declared.length
    ? declared
    : ALL_PROTOCOLS.map((protocol) => ({ protocol, lo: 1, hi: 65535 }));
  for (const d of ranges) {
    const cuts = new Set<number>([d.lo]);
    for (const r of envelope) {
      for (const p of r.ports) {
        if (p.protocol !== d.protocol) continue;
        if (p.lo > d.lo && p.lo <= d.hi) cuts.add(p.lo);
        if (p.hi + 1 > d.lo && p.hi + 1 <= d.hi) cuts.add(p.hi + 1);
      }
    }
    for (const c of cuts) {
      const applicable: NormRule[] = [];
      for (const r of envelope) if (portMatches(r.ports, d.protocol, c)) applicable.push(r);
      if (!coveredAt(applicable)) return false;
    }
  }
  return true;
}

function ranges(c: ParsedCidr, except: ParsedCidr[]): Interval[] {
  const base: Interval[] = [{ lo: c.lo, hi: c.hi }];
  const cuts: Interval[] = [];
  for (const e of except) if (e.version === c.version) cuts.push({ lo: e.lo, hi: e.hi });
  return cuts.length ? subtractIntervals(base, cuts) : base;
}

function cidrCovered(decl: NormRule, rules: NormRule[]): boolean {
  const c = decl.cidr as ParsedCidr;
  const needed = ranges(c, decl.except);
  const have: Interval[] = [];
  for (const r of rules) {
    if (r.kind === 'any') have.push(FULL_RANGE[c.version]);
    else if (r.kind === 'cidr' && r.cidr && r.cidr.version === c.version) {
      have.push(...ranges(r.cidr, r.except));
    }
  }
  return intervalsCover(have, needed);
}

function hostCovered(host: string, rules: NormRule[]): boolean {
  for (const r of rules) {
    if (
      r.kind !== 'any' &&
      !(r.kind === 'httpsHostname' && r.host !== undefined && hostPatternCovers(r.host, host))
    ) {
      continue;
    }
    if (r.hostExcept.some((e) => exceptionHits(e, host))) continue;
    return true;
  }
  return false;
}

function labelsContain(have: Record<string, string>, need: Record<string, string>): boolean {
  for (const k in need) if (have[k] !== need[k]) return false;
  return true;
}

function selectorCovered(decl: NormRule, rules: NormRule[]): boolean {
  for (const r of rules) {
    if (r.kind !== 'selector' || !r.podLabels || !decl.podLabels) continue;
    if (!labelsContain(decl.podLabels, r.podLabels)) continue;
    const declNs = decl.namespaceLabels;
    const entNs = r.namespaceLabels;
    if (declNs === undefined && entNs === undefined) return true;
    if (declNs !== undefined && entNs !== undefined && labelsContain(declNs, entNs)) return true;
  }
  return false;
}

/** Whether a declared (sandbox) rule fits inside a non-empty envelope. */
export function ruleContained(decl: NormRule, envelope: NormRule[]): boolean {
  switch (decl.kind) {
    case 'cidr':
      return everySegment(decl.ports, envelope, (rules) => cidrCovered(decl, rules));
    case 'tenant':
      return everySegment(decl.ports, envelope, (rules) =>
        rules.some((r) => r.kind === 'any' || (r.kind === 'tenant' && r.tenant === decl.tenant)),
      );
    case 'any':
      return everySegment(decl.ports, envelope, (rules) => rules.some((r) => r.kind === 'any'));
    case 'httpsHostname':
      // A hostname grant is HTTPS: TCP 443 whatever its (empty or 443-only) ports say.
      return hostCovered(
        decl.host as string,
        envelope.filter((r) => portMatches(r.ports, 'TCP', 443)),
      );
    case 'selector':
      // Explicit-only: `any` never covers a selector.
      return everySegment(decl.ports, envelope, (rules) => selectorCovered(decl, rules));
  }
}

/** A string identifying a normalized rule's meaning (memo key for containment answers). */
export function ruleKey(r: NormRule): string {
  let k: string;
  switch (r.kind) {
    case 'cidr':
      k = `c${r.cidr?.canonical ?? ''}`;
      for (const e of r.except) k += `!${e.canonical}`;
      break;
    case 'httpsHostname':
      return `h${r.host ?? ''}`;
    case 'tenant':
      k = `t${r.tenant ?? ''}`;
      break;
    case 'any':
      k = 'a';
      break;
    case 'selector':
      k = `s${JSON.stringify(r.podLabels)}${JSON.stringify(r.namespaceLabels ?? null)}`;
      break;
  }
  for (const p of r.ports) k += `|${p.protocol}${p.lo}-${p.hi}`;
  return k;
}

/** Describes an envelope briefly for messages. */
export function describeRule(r: NormRule): string {
  switch (r.kind) {
    case 'cidr':
      return `cidr ${r.cidr?.canonical ?? '?'}${r.except.length ? ` except ${r.except.map((e) => e.canonical).join(',')}` : ''}`;
    case 'httpsHostname':
      return `httpsHostname ${r.host ?? '?'}`;
    case 'tenant':
      return `tenant ${r.tenant ?? '?'}`;
    case 'any':
      return 'any';
    case 'selector':
      return `selector ${show(r.podLabels)}`;
  }
}

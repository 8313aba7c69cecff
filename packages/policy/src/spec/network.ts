import * as m_contracts from '@paddock/contracts';
import * as m_defaults from '../defaults';
import { type NormRule } from '../network';
import * as m_network from '../network';
import * as m_spec_reader from '../spec-reader';
import { type Sink } from '../violations';
import * as m_violations from '../violations';
import * as m_fields from './fields';

// Hot-path helpers bound once: transpilers (tsx/esbuild) turn imported names into getter
// calls on every use, which cost ~10% of a resolution. Locals are plain calls.
const { DNS_EGRESS_MODES } = m_contracts;
const { SPEC_LIMITS } = m_defaults;
const { checkRule } = m_network;
const { checkKeys, readArray, readBool, readObject, readString } = m_spec_reader;
const { addViolation, idx } = m_violations;
const { NETWORK } = m_fields;

const DNS_MODES = new Set<string>(DNS_EGRESS_MODES);

/** The request's network options: declared rules, invalid ones kept as placeholders. */
export interface NetworkRead {
  egress: NormRule[];
  ingress: NormRule[];
  denyEgress: boolean;
  denyIngress: boolean;
  declaredEgress: boolean;
  declaredIngress: boolean;
}

/** Reads `network`: declared rules (invalid ones kept as placeholders so indexes stay aligned). */
export function readNetwork(spec: Record<string, unknown>, sink: Sink): NetworkRead {
  const n = readObject(spec, 'network', '', sink);
  const res = {
    egress: [] as NormRule[],
    ingress: [] as NormRule[],
    denyEgress: false,
    denyIngress: false,
    declaredEgress: false,
    declaredIngress: false,
  };
  if (!n) return res;
  checkKeys(n, NETWORK.keys, 'network', sink);
  res.denyEgress = readBool(n, 'denyEgress', 'network', sink) ?? false;
  res.denyIngress = readBool(n, 'denyIngress', 'network', sink) ?? false;
  const dns = readString(n, 'dnsEgress', 'network', sink);
  if (dns !== undefined && !DNS_MODES.has(dns)) {
    addViolation(
      sink,
      'network.dnsEgress',
      'invalid_enum',
      `must be one of ${[...DNS_MODES].join(', ')}`,
    );
  }
  const eg = readArray(n, 'egress', 'network', sink, SPEC_LIMITS.maxRules);
  if (eg) {
    res.declaredEgress = eg.length > 0;
    if (res.denyEgress && eg.length > 0) {
      addViolation(
        sink,
        'network.denyEgress',
        'deny_egress_with_rules',
        'denyEgress cannot be combined with egress rules; drop one of them',
      );
    }
    for (let i = 0; i < eg.length; i++) {
      const r = checkRule(eg[i], idx('network.egress', i), 'sandbox', sink);
      if (r) res.egress.push(r);
      else res.egress.push(INVALID_RULE);
    }
  }
  const ing = readArray(n, 'ingress', 'network', sink, SPEC_LIMITS.maxRules);
  if (ing) {
    res.declaredIngress = ing.length > 0;
    for (let i = 0; i < ing.length; i++) {
      const r = checkRule(ing[i], idx('network.ingress', i), 'sandboxIngress', sink);
      res.ingress.push(r ?? INVALID_RULE);
    }
  }
  return res;
}

/** Placeholder keeping rule indexes aligned when a declared rule was invalid (already reported). */
export const INVALID_RULE: NormRule = {
  kind: 'any',
  except: [],
  hostExcept: [],
  ports: [],
  rule: {},
};

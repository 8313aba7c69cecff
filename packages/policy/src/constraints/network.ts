import type { ResolvedEgress, ResolvedIngress, RunnerCapabilities } from '@paddock/contracts';
import { type CompiledPolicy } from '../compile';
import { type NormRule } from '../network';
import * as m_compile from '../compile';
import * as m_network from '../network';
import * as m_spec_network from '../spec/network';
import { type Sink } from '../violations';
import * as m_violations from '../violations';
import { type ConstraintInput } from './check';
import * as m_check from './check';

// Hot-path helpers bound once: transpilers (tsx/esbuild) turn imported names into getter
// calls on every use, which cost ~10% of a resolution. Locals are plain calls.
const { memoStore } = m_compile;
const { describeRule, ruleContained, ruleKey } = m_network;
const { INVALID_RULE } = m_spec_network;
const { addViolation, idx, join } = m_violations;
const { CONSTRAINT } = m_check;

type Direction = 'egress' | 'ingress';

/** What differs between the two directions; everything else is one rule. */
const DIRECTIONS = {
  egress: {
    rule: 'egress_not_allowed',
    constraint: CONSTRAINT.allowedEgress,
    // Said of a rule that came from the policy default rather than the request.
    defaultNote: ' (from the policy defaultEgress)',
  },
  ingress: { rule: 'ingress_not_allowed', constraint: CONSTRAINT.allowedIngress, defaultNote: '' },
} as const;

/** The rules one direction resolved to, each against the policy envelope and the runner. */
function checkDirection(
  dir: Direction,
  resolved: ResolvedEgress | ResolvedIngress,
  declared: NormRule[],
  p: CompiledPolicy,
  caps: RunnerCapabilities,
  sink: Sink,
): void {
  const d = DIRECTIONS[dir];
  const fromSpec = resolved.source === 'spec';
  const envelope = dir === 'egress' ? p.allowedEgress : p.allowedIngress;
  const memo = dir === 'egress' ? p.memo.egress : p.memo.ingress;
  const kinds: readonly string[] = dir === 'egress' ? caps.egressRuleKinds : caps.ingressRuleKinds;
  const rules = fromSpec
    ? declared
    : resolved.source === 'policy-default'
      ? dir === 'egress'
        ? p.defaultEgress
        : p.defaultIngress
      : [];
  const base = `network.${dir}`;
  rules.forEach((r, i) => {
    if (r === INVALID_RULE) return;
    const rp = fromSpec ? idx(base, i) : base;
    if (dir === 'egress' && r.kind === 'httpsHostname' && p.denyHostnames) {
      addViolation(
        sink,
        join(rp, 'httpsHostname'),
        'https_hostname_denied',
        `the policy forbids httpsHostname egress grants (${CONSTRAINT.denyHostnames})`,
        { requested: r.host, constraint: CONSTRAINT.denyHostnames },
      );
    } else if (
      fromSpec &&
      envelope.length &&
      !contained(memo, dir === 'egress' ? p.memo.egressHosts : null, r, envelope)
    ) {
      addViolation(
        sink,
        rp,
        d.rule,
        `${dir} ${describeRule(r)}${portsText(r)} is not inside the policy's allowed ${dir} (${d.constraint})`,
        { requested: r.rule, limit: envelope.map((a) => a.rule), constraint: d.constraint },
      );
    }
    if (!kinds.includes(r.kind)) {
      addViolation(
        sink,
        rp,
        'runner_capability',
        `the runner cannot enforce ${r.kind} ${dir} rules${fromSpec ? '' : d.defaultNote} (it enforces: ${kinds.join(', ') || 'none'})`,
        { requested: r.kind, limit: kinds },
      );
    }
  });
}

/** Declared (or policy-default) egress and ingress rules against the policy's envelopes and the
 * rule kinds the runner can enforce. */
export function checkNetwork({ read, merged, policy: p, caps, sink }: ConstraintInput): void {
  const { egress, ingress } = merged;
  if (!egress.denyAll) {
    checkDirection('egress', egress, read.network.egress, p, caps, sink);
    const fromSpec = egress.source === 'spec';
    if (!caps.supportsEgress && (egress.rules.length > 0 || egress.unrestricted)) {
      addViolation(
        sink,
        fromSpec ? 'network.egress' : 'network.denyEgress',
        'runner_capability',
        `the runner cannot grant egress${fromSpec ? '' : ' (the policy defaultEgress needs it)'}; set network.denyEgress or pick another runner`,
        { requested: egress.source, limit: 'deny-all' },
      );
    }
  }
  if (!ingress.denyAll) checkDirection('ingress', ingress, read.network.ingress, p, caps, sink);
}

/** Whether a declared rule lies inside the envelope, memoized per policy by the rule's key; an
 * egress hostname rule (whose key is its host) by the host itself, in `hosts`, so no key is built. */
function contained(
  memo: Map<string, boolean>,
  hosts: Map<string, boolean> | null,
  r: NormRule,
  envelope: NormRule[],
): boolean {
  const byHost = hosts !== null && r.kind === 'httpsHostname';
  const m = byHost ? hosts : memo;
  const key = byHost ? (r.host ?? '') : ruleKey(r);
  const hit = m.get(key);
  return hit !== undefined ? hit : memoStore(m, key, ruleContained(r, envelope));
}

function portsText(r: NormRule): string {
  if (r.ports.length === 0) return '';
  return ` ports ${r.ports.map((p) => `${p.protocol}/${p.lo}${p.hi !== p.lo ? `-${p.hi}` : ''}`).join(',')}`;
}

import type { SpecFeature } from '@paddock/contracts';
import * as m_spec_features from '../spec-features';
import * as m_violations from '../violations';
import { type ConstraintInput } from './check';

// Hot-path helpers bound once: transpilers (tsx/esbuild) turn imported names into getter
// calls on every use, which cost ~10% of a resolution. Locals are plain calls.
const { specFeatureUses } = m_spec_features;
const { addViolation } = m_violations;

/**
 * Every field that uses a spec feature the runner's backend does not declare is refused, naming
 * the field and the feature: the request is never launched with the field left out. What the
 * runner's own policy adds to every sandbox (its `base` attachments, a DNS egress mode) is held
 * to the same rule, named by its place in the policy.
 */
export function checkSpecFeatures({ spec, read, policy: p, caps, sink }: ConstraintInput): void {
  const honoured = caps.specFeatures;
  const refuse = (feature: SpecFeature, field: string, fromPolicy?: string, constraint?: string): void => {
    if (honoured.includes(feature)) return;
    const message = fromPolicy
      ? `${fromPolicy}, but the runner's backend does not honour ${feature}; change the runner policy or pick another runner`
      : `the runner's backend does not honour ${feature}; pick a runner that declares it, or remove the field`;
    addViolation(sink, field, 'runner_capability', message, {
      requested: feature,
      limit: honoured,
      ...(constraint ? { constraint } : {}),
    });
  };
  for (const u of specFeatureUses(spec, read.primaryContainer)) refuse(u.feature, u.field);
  const base = p.base;
  if (Object.keys(base.annotations).length) refuse('base.annotations', 'base.annotations', 'the runner policy attaches annotations', 'base.annotations');
  if (Object.keys(base.labels).length) refuse('base.labels', 'base.labels', 'the runner policy attaches labels', 'base.labels');
  if (base.containers.length) refuse('base.containers', 'base.containers', 'the runner policy attaches sidecar containers', 'base.containers');
  if (Object.keys(base.podSpec).length) refuse('base.podSpec', 'base.podSpec', `the runner policy sets pod fields (${Object.keys(base.podSpec).sort().join(', ')})`, 'base');
  const dns = p.policy.constraints?.network?.dnsEgress;
  if (dns !== undefined && dns !== 'DNS_EGRESS_MODE_UNSPECIFIED' && isObjNetworkWithoutDns(spec)) {
    refuse('network.dnsEgress', 'network.dnsEgress', `the policy's DNS egress mode ${dns} (the policy default)`, 'constraints.network.dnsEgress');
  }
}

/** The policy's DNS mode applies when the request sets none of its own (a request's own is checked above). */
function isObjNetworkWithoutDns(spec: Record<string, unknown>): boolean {
  const n = spec.network;
  return !(typeof n === 'object' && n !== null && !Array.isArray(n) && 'dnsEgress' in n);
}

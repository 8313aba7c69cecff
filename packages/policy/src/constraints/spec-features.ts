import type { SpecFeature } from '@paddock/contracts';
import * as m_contracts from '@paddock/contracts';
import { type SpecFeatureUse } from '../spec-features';
import * as m_spec_features from '../spec-features';
import { type Sink } from '../violations';
import * as m_violations from '../violations';
import { type ConstraintInput } from './check';

// Hot-path helpers bound once: transpilers (tsx/esbuild) turn imported names into getter
// calls on every use, which cost ~10% of a resolution. Locals are plain calls.
const { SPEC_FEATURES } = m_contracts;
const { collectFeatureUses } = m_spec_features;
const { addViolation } = m_violations;

interface Honoured {
  set: ReadonlySet<SpecFeature>;
  /** Every spec feature is honoured: nothing can be refused, so nothing is looked at. */
  all: boolean;
  /** The list's length when cached: a list grown or cut in place is read again. */
  length: number;
}

/** The honoured set per capability list: a runner's capabilities are one object per heartbeat,
 * resolved against many requests (treated as a value, as policies are). */
const honouredCache = new WeakMap<readonly SpecFeature[], Honoured>();

/** Capabilities built by hand without the list: none honoured, as the schema's default says. */
const NOTHING_HONOURED: Honoured = { set: new Set(), all: false, length: 0 };

function honouredOf(features: readonly SpecFeature[] | undefined): Honoured {
  if (!Array.isArray(features)) return NOTHING_HONOURED;
  let h = honouredCache.get(features);
  if (h === undefined || h.length !== features.length) {
    const set = new Set(features);
    h = { set, all: SPEC_FEATURES.every((f) => set.has(f)), length: features.length };
    honouredCache.set(features, h);
  }
  return h;
}

/**
 * Every field that uses a spec feature the runner's backend does not declare is refused, naming
 * the field and the feature: the request is never launched with the field left out. What the
 * runner's own policy adds to every sandbox (its `base` attachments, a DNS egress mode) is held
 * to the same rule, named by its place in the policy.
 */
export function checkSpecFeatures({ spec, read, policy: p, caps, sink }: ConstraintInput): void {
  const honoured = caps.specFeatures;
  const h = honouredOf(honoured);
  if (h.all) return;
  const uses: SpecFeatureUse[] = [];
  collectFeatureUses(spec, read.primaryContainer, h.set, uses);
  for (const u of uses) refuse(sink, honoured, u.feature, u.field);
  const base = p.base;
  if (!h.set.has('base.annotations') && Object.keys(base.annotations).length) {
    refuse(sink, honoured, 'base.annotations', 'base.annotations', 'the runner policy attaches annotations', 'base.annotations');
  }
  if (!h.set.has('base.labels') && Object.keys(base.labels).length) {
    refuse(sink, honoured, 'base.labels', 'base.labels', 'the runner policy attaches labels', 'base.labels');
  }
  if (!h.set.has('base.containers') && base.containers.length) {
    refuse(sink, honoured, 'base.containers', 'base.containers', 'the runner policy attaches sidecar containers', 'base.containers');
  }
  if (!h.set.has('base.podSpec') && Object.keys(base.podSpec).length) {
    refuse(sink, honoured, 'base.podSpec', 'base.podSpec', `the runner policy sets pod fields (${Object.keys(base.podSpec).sort().join(', ')})`, 'base');
  }
  const dns = p.policy.constraints?.network?.dnsEgress;
  if (
    !h.set.has('network.dnsEgress') &&
    dns !== undefined &&
    dns !== 'DNS_EGRESS_MODE_UNSPECIFIED' &&
    isObjNetworkWithoutDns(spec)
  ) {
    refuse(sink, honoured, 'network.dnsEgress', 'network.dnsEgress', `the policy's DNS egress mode ${dns} (the policy default)`, 'constraints.network.dnsEgress');
  }
}

/** One refusal of a feature the runner does not honour (callers check that it does not). */
function refuse(
  sink: Sink,
  honoured: readonly SpecFeature[],
  feature: SpecFeature,
  field: string,
  fromPolicy?: string,
  constraint?: string,
): void {
  const message = fromPolicy
    ? `${fromPolicy}, but the runner's backend does not honour ${feature}; change the runner policy or pick another runner`
    : `the runner's backend does not honour ${feature}; pick a runner that declares it, or remove the field`;
  addViolation(sink, field, 'runner_capability', message, {
    requested: feature,
    limit: honoured,
    ...(constraint ? { constraint } : {}),
  });
}

/** The policy's DNS mode applies when the request sets none of its own (a request's own is checked above). */
function isObjNetworkWithoutDns(spec: Record<string, unknown>): boolean {
  const n = spec.network;
  return !(typeof n === 'object' && n !== null && !Array.isArray(n) && 'dnsEgress' in n);
}

import { UNKNOWN, attr, isObjectValue, valuesEqual, type Value, type ValueObject } from '../cty/value';
import type { AttributePath } from '../framework/diagnostics';
import { attributeType } from '../framework/schema';
import { CONFIGURABLE, FORCES_REPLACEMENT, RELEASE_CHANNEL_DEFAULT, RESOURCE_ATTRIBUTES, RUNNER_GROUP_DEFAULT, STABLE_COMPUTED } from './schema';

/**
 * Plan modification for the runner (pure). The plan is built from the configuration, with the
 * defaults the API would apply made explicit, so that what Terraform shows is what the runner
 * will be:
 * - `runner_group_id` unset plans `default`; `spec` unset plans the platform defaults; and
 *   `spec.release_channel` unset plans `RELEASE_CHANNEL_STABLE`. Removing them resets them.
 * - With nothing configurable changed the plan is the prior state itself: no diff, no call.
 * - On a change, status attributes become unknown (the apply reads them back); the policy
 *   `etag` stays known unless the policy changes.
 * - `runner_id`, `cluster_id` and `zone` force replacement.
 */
export interface RunnerPlan {
  planned: Value;
  requiresReplace: AttributePath[];
}

function plannedSpec(config: Value): Value {
  if (config === UNKNOWN) return UNKNOWN;
  if (!isObjectValue(config)) {
    return { release_channel: RELEASE_CHANNEL_DEFAULT, maintenance_policy: null, overrides: null, enforce_resource_limits: null };
  }
  return { ...config, release_channel: config.release_channel ?? RELEASE_CHANNEL_DEFAULT };
}

/** The configurable attributes as they will be after apply. */
function desired(config: ValueObject): ValueObject {
  return {
    runner_id: attr(config, 'runner_id'),
    cluster_id: attr(config, 'cluster_id'),
    zone: attr(config, 'zone'),
    display_name: attr(config, 'display_name'),
    runner_group_id: attr(config, 'runner_group_id') ?? RUNNER_GROUP_DEFAULT,
    spec: plannedSpec(attr(config, 'spec')),
    policy: attr(config, 'policy'),
  };
}

const differs = (name: keyof typeof RESOURCE_ATTRIBUTES, a: Value, b: Value): boolean => !valuesEqual(attributeType(RESOURCE_ATTRIBUTES[name]), attr(a, name), attr(b, name));

export function planRunner(prior: Value, config: Value): RunnerPlan {
  if (!isObjectValue(config)) return { planned: null, requiresReplace: [] };
  const want = desired(config);
  const computedUnknown: ValueObject = {};
  for (const k of Object.keys(RESOURCE_ATTRIBUTES)) if (!(CONFIGURABLE as readonly string[]).includes(k)) computedUnknown[k] = UNKNOWN;
  if (!isObjectValue(prior)) {
    return { planned: { ...computedUnknown, ...want, id: want.runner_id ?? null }, requiresReplace: [] };
  }
  const changes = CONFIGURABLE.filter((name) => differs(name, prior, want));
  if (changes.length === 0) return { planned: prior, requiresReplace: [] };
  const planned: ValueObject = { ...computedUnknown, ...want, etag: changes.includes('policy') ? UNKNOWN : attr(prior, 'etag') };
  for (const k of STABLE_COMPUTED) planned[k] = attr(prior, k);
  const requiresReplace = FORCES_REPLACEMENT.filter((name) => changes.includes(name)).map((name) => [name]);
  return { planned, requiresReplace };
}

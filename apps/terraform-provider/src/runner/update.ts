import { attr, valuesEqual, type Value, type ValueObject } from '../cty/value';
import { attributeType } from '../framework/schema';
import { RESOURCE_ATTRIBUTES, SPEC_ATTRIBUTES } from './schema';
import { policyToApi, specToApi } from './state';

/**
 * The PATCH of an in-place update: an explicit `updateMask` naming exactly what changed, and a
 * body that carries those members. A spec setting that was removed from the configuration is
 * named in the mask and left out of the body, which the API reads as "reset to the default";
 * overrides and the policy are replaced whole. A policy write carries the `etag` the prior
 * state was refreshed with, so an edit made since then fails instead of being overwritten.
 */
export interface RunnerPatch {
  updateMask: string[];
  body: Record<string, unknown>;
}

const SPEC_PATHS: Record<keyof typeof SPEC_ATTRIBUTES, string> = {
  release_channel: 'spec.release_channel',
  maintenance_policy: 'spec.maintenance_policy',
  overrides: 'spec.overrides',
  enforce_resource_limits: 'spec.enforce_resource_limits',
};

const changed = (name: keyof typeof RESOURCE_ATTRIBUTES, prior: Value, planned: Value): boolean =>
  !valuesEqual(attributeType(RESOURCE_ATTRIBUTES[name]), attr(prior, name), attr(planned, name));

export function runnerPatch(prior: ValueObject, planned: ValueObject): RunnerPatch {
  const mask: string[] = [];
  const body: Record<string, unknown> = {};
  if (changed('display_name', prior, planned)) {
    mask.push('display_name');
    const v = attr(planned, 'display_name');
    if (typeof v === 'string') body.displayName = v;
  }
  if (changed('runner_group_id', prior, planned)) {
    mask.push('identity.runner_group_id');
    body.identity = { runnerGroupId: attr(planned, 'runner_group_id') };
  }
  const priorSpec = attr(prior, 'spec');
  const plannedSpec = attr(planned, 'spec');
  for (const [name, path] of Object.entries(SPEC_PATHS) as [keyof typeof SPEC_ATTRIBUTES, string][]) {
    if (!valuesEqual(attributeType(SPEC_ATTRIBUTES[name]), attr(priorSpec, name), attr(plannedSpec, name))) mask.push(path);
  }
  if (mask.some((p) => p.startsWith('spec.'))) body.spec = specToApi(plannedSpec);
  if (changed('policy', prior, planned)) {
    mask.push('policy');
    body.policy = policyToApi(attr(planned, 'policy'));
    body.etag = attr(prior, 'etag');
  }
  return { updateMask: mask, body };
}

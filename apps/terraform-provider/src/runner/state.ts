import type { ManagedRunner } from '@paddock/contracts';
import { attr, isObjectValue, type Value, type ValueObject } from '../cty/value';
import { fromApi, toApi } from '../framework/wire';
import { POLICY_ATTRIBUTES, RESOURCE_ATTRIBUTES, SPEC_ATTRIBUTES } from './schema';

/**
 * The mapping between a runner as the REST API shows it and the resource's state, in both
 * directions. The API nests the identity (`identity.runnerId`) where Terraform has flat
 * attributes; everything else follows the schema's names.
 */

/** The runner as state. `hint` is what Terraform holds (plan on apply, prior state on refresh, null on import). */
export function runnerToState(r: ManagedRunner, hint: Value): ValueObject {
  const state = fromApi(RESOURCE_ATTRIBUTES, { ...r, ...r.identity }, hint) as ValueObject;
  // The API accepts a cluster by UUID or by name and answers with the UUID: keep the
  // configuration's spelling when it names the same cluster.
  const hintCluster = attr(hint, 'cluster_id');
  if (typeof hintCluster === 'string' && (hintCluster === r.identity.clusterId || hintCluster === r.identity.clusterName)) {
    state.cluster_id = hintCluster;
  }
  return state;
}

/** The spec object the API takes (camelCase); settings left null are left out. */
export const specToApi = (spec: Value): Record<string, unknown> => toApi(SPEC_ATTRIBUTES, spec);

/** The policy document the API takes; `{}` for an explicit empty policy. */
export const policyToApi = (policy: Value): Record<string, unknown> => toApi(POLICY_ATTRIBUTES, policy);

/** `POST /v1/sandbox/managedRunners` body for a planned runner. */
export function createBody(planned: ValueObject, requestId: string): Record<string, unknown> {
  const displayName = attr(planned, 'display_name');
  return {
    identity: {
      runnerId: planned.runner_id,
      zone: planned.zone,
      clusterId: planned.cluster_id,
      runnerGroupId: planned.runner_group_id,
    },
    ...(typeof displayName === 'string' ? { displayName } : {}),
    spec: specToApi(planned.spec ?? null),
    policy: isObjectValue(planned.policy) ? policyToApi(planned.policy) : {},
    requestId,
  };
}

import type { Insertable } from 'kysely';
import { policyEtag } from '../domain/etag';
import { renderDeploymentSpec } from '../domain/deployment-spec';
import type { RunnerState } from '../domain/runner.state';
import type { RunnersTable } from '../runners.tables';

/** Gateway address written into the rendered Deployment. */
export const DEFAULT_GATEWAY_SERVER = 'paddock-gateway.paddock-system.svc:443';

/**
 * The `cp_runners` row for a folded runner state (null = no row: never created or removed).
 * Pure; the writer upserts it in the append transaction. Heartbeat columns are not part of it:
 * the intake owns them and an upsert must not clobber them.
 */
export function runnerRow(state: RunnerState, streamVersion: number): Insertable<RunnersTable> | null {
  if (state.status !== 'Live' && state.status !== 'Deleting') return null;
  return {
    uid: state.uid,
    organization_id: state.organizationId,
    runner_id: state.runnerId,
    zone: state.zone,
    cluster_id: state.clusterId,
    cluster_name: state.clusterName,
    runner_group_id: state.runnerGroupId,
    display_name: state.displayName,
    spec: JSON.stringify(state.spec),
    policy: JSON.stringify(state.policy),
    policy_revision: state.policyRevision,
    policy_etag: policyEtag(state.uid, state.policyRevision),
    install_status: state.installStatus,
    install_error: JSON.stringify(state.installError),
    connection_status: state.connectionStatus,
    active_revision: state.activeRevision,
    target_revision: state.target.revision,
    target_version: state.target.version,
    target_image: state.target.image,
    deployment_spec: JSON.stringify(renderDeploymentSpec(state, DEFAULT_GATEWAY_SERVER)),
    allow_privileged_profile_annotations: state.allowPrivilegedProfileAnnotations,
    profile_bindings: JSON.stringify(state.profileBindings),
    last_fencing_token: state.lastFencingToken,
    stream_version: streamVersion,
    create_time: state.createdAt,
    update_time: state.updatedAt,
  };
}

import type { Insertable, Selectable } from 'kysely';
import type { InstallError, ProfileBinding, RunnerConnectionStatus, RunnerInstallStatus, StoredRunnerSpec } from '@paddock/contracts';
import { policyEtag } from '../domain/etag';
import { renderDeploymentSpec } from '../domain/deployment-spec';
import type { DeletingRunner, LiveRunner, RunnerState } from '../domain/runner.state';
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
    // Apart from the spec, so controllers may read a runner's pools without its other settings.
    warm_pools: JSON.stringify(state.spec.warmPools ?? []),
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

const iso = (d: Date | string): string => (d instanceof Date ? d : new Date(d)).toISOString();

/**
 * The inverse of {@link runnerRow}: the folded state a `cp_runners` row stands for. The row is
 * written from the fold in the same transaction as every append, with `stream_version`, so a
 * writer that locks the row (`SELECT … FOR UPDATE`) can decide from it instead of re-reading the
 * whole stream; the append's expected version (`stream_version`) still guards it in SQL.
 * DELETING is left only by removal (the decider's rule), so it alone marks a deleting runner.
 */
export function runnerStateOfRow(row: Selectable<RunnersTable>): LiveRunner | DeletingRunner {
  return {
    status: row.install_status === 'RUNNER_INSTALL_STATUS_DELETING' ? 'Deleting' : 'Live',
    uid: row.uid,
    organizationId: row.organization_id,
    runnerId: row.runner_id,
    zone: row.zone,
    clusterId: row.cluster_id,
    clusterName: row.cluster_name,
    runnerGroupId: row.runner_group_id,
    displayName: row.display_name,
    spec: row.spec as StoredRunnerSpec,
    policy: (row.policy ?? null) as Record<string, unknown> | null,
    policyRevision: row.policy_revision,
    installStatus: row.install_status as RunnerInstallStatus,
    installError: (row.install_error ?? null) as InstallError | null,
    connectionStatus: row.connection_status as RunnerConnectionStatus,
    activeRevision: row.active_revision,
    target: { revision: row.target_revision, version: row.target_version, image: row.target_image },
    allowPrivilegedProfileAnnotations: row.allow_privileged_profile_annotations,
    profileBindings: (row.profile_bindings ?? []) as ProfileBinding[],
    lastFencingToken: Number(row.last_fencing_token),
    createdAt: iso(row.create_time),
    updatedAt: iso(row.update_time),
  };
}

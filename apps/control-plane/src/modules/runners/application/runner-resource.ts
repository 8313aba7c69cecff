import type {
  DeploymentSpec,
  InstallError,
  ManagedRunner,
  RunnerConnectionStatus,
  RunnerInstallStatus,
  StoredRunnerSpec,
  WarmPoolStatus,
} from '@paddock/contracts';
import type { RunnerRow } from '../projections/runner-read.repository';

const iso = (d: Date | string): string => (d instanceof Date ? d : new Date(d)).toISOString();

/**
 * The v1 JSON of a runner row. `latestRevision` is the newest release on the runner's channel
 * (0 when none is published), from which `updateAvailable` follows.
 */
export function toManagedRunner(row: RunnerRow, latestRevision: number): ManagedRunner {
  const spec = row.spec as StoredRunnerSpec;
  const policy = (row.policy ?? null);
  return {
    uid: row.uid,
    identity: {
      runnerId: row.runner_id,
      zone: row.zone,
      clusterId: row.cluster_id,
      clusterName: row.cluster_name,
      runnerGroupId: row.runner_group_id,
    },
    displayName: row.display_name,
    spec: { ...spec, warmPools: spec.warmPools ?? [] },
    warmPoolStatus: (row.observed_warm_pool_status ?? []) as WarmPoolStatus[],
    policy,
    etag: row.policy_etag,
    installStatus: row.install_status as RunnerInstallStatus,
    connectionStatus: row.connection_status as RunnerConnectionStatus,
    lastHeartbeatTime: row.last_heartbeat_time ? iso(row.last_heartbeat_time) : null,
    activeRevision: String(row.active_revision),
    targetRevision: String(row.target_revision),
    updateAvailable: latestRevision > row.target_revision,
    rolloutInProgress: row.target_revision > row.active_revision,
    installError: (row.install_error ?? null) as InstallError | null,
    // Until the runner reports what it applies, "no policy set" means it will get the default.
    usingDefaultPolicy: row.observed_using_default_policy ?? policy === null,
    managementMode: 'MANAGEMENT_MODE_MANAGED',
    createTime: iso(row.create_time),
    updateTime: iso(row.update_time),
    deploymentSpec: row.deployment_spec as DeploymentSpec,
  };
}

/** The legacy v1beta2 shape: `managedSpec` (with the privileged flag) and `profileBindings`. */
export function toLegacyRunner(row: RunnerRow, latestRevision: number): Record<string, unknown> {
  const v1 = toManagedRunner(row, latestRevision);
  return {
    id: v1.identity.runnerId,
    uid: v1.uid,
    displayName: v1.displayName,
    identity: v1.identity,
    managementMode: v1.managementMode,
    managedSpec: { ...v1.spec, allowPrivilegedProfileAnnotations: row.allow_privileged_profile_annotations },
    profileBindings: row.profile_bindings,
    installStatus: v1.installStatus,
    connectionStatus: v1.connectionStatus,
    lastHeartbeatTime: v1.lastHeartbeatTime,
    activeRevision: v1.activeRevision,
    targetRevision: v1.targetRevision,
    updateAvailable: v1.updateAvailable,
    createTime: v1.createTime,
    updateTime: v1.updateTime,
  };
}

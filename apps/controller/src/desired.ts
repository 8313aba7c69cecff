import type { CpRunnerV1, DeploymentSpec, RunnerConfigFileInput, WarmPool } from '@paddock/contracts';

/**
 * The desired state of one runner, read from the control plane's published view `cp_runners_v2`
 * (the fold of the runner's event stream). The controller never interprets events step by step: an
 * event only says "look at this runner again" (level-based reconcile).
 */
export interface DesiredRunner {
  uid: string;
  organizationId: string;
  runnerId: string;
  clusterId: string;
  zone: string;
  runnerGroupId: string;
  /** True once a DELETE was accepted: tear everything down, then report `gone`. */
  deleting: boolean;
  targetRevision: number;
  targetImage: string;
  /** The stored policy document (validated by the control plane); null = the platform default. */
  policy: CpRunnerV1['policy'];
  policyEtag: string;
  /** The Deployment the control plane rendered, in the shape both sides import from contracts. */
  deploymentSpec: DeploymentSpec;
  /** The runner's warm pools (templates already checked against `policy` by the control plane). */
  warmPools?: WarmPool[];
}

/**
 * The runner's config file for `d` (contracts' `RunnerConfigFileSchema`, which the runner parses):
 * a mounted ConfigMap, or the file the local driver writes (which adds the NATS settings).
 */
export function runnerConfigOf(d: DesiredRunner): RunnerConfigFileInput {
  return {
    runnerId: d.runnerId,
    revision: d.targetRevision,
    policy: d.policy,
    ...(d.policyEtag ? { policyEtag: d.policyEtag } : {}),
    ...(d.warmPools?.length ? { warmPools: d.warmPools } : {}),
    identity: { organizationId: d.organizationId, clusterId: d.clusterId, zone: d.zone, runnerGroupId: d.runnerGroupId },
  };
}

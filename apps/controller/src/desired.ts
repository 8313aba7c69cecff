import type { CpRunnerV1, DeploymentSpec } from '@paddock/contracts';

/**
 * The desired state of one runner, read from the control plane's published view `cp_runners_v1`
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
}

/** What the runner reads from its config file (a mounted ConfigMap, or a file the local driver writes). */
export interface RunnerConfigFile {
  runnerId: string;
  organizationId: string;
  clusterId: string;
  zone: string;
  runnerGroupId: string;
  revision: number;
  policy: CpRunnerV1['policy'];
  policyEtag: string;
}

export function runnerConfigOf(d: DesiredRunner): RunnerConfigFile {
  return {
    runnerId: d.runnerId,
    organizationId: d.organizationId,
    clusterId: d.clusterId,
    zone: d.zone,
    runnerGroupId: d.runnerGroupId,
    revision: d.targetRevision,
    policy: d.policy,
    policyEtag: d.policyEtag,
  };
}

import type { Policy } from '@paddock/contracts';

/**
 * The desired state of one runner, read from the control plane's `cp_runners` read model (the
 * fold of the runner's event stream). The controller never interprets events step by step: an
 * event only says "look at this runner again" (level-based reconcile, STYLE B.9).
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
  policy: Policy | null;
  policyEtag: string;
  deploymentSpec: RunnerDeploymentSpec;
}

/** The rendered Deployment settings (`deploymentSpec` of the runner resource). */
export interface RunnerDeploymentSpec {
  image: string;
  imagePullPolicy: string;
  gatewayServer: string;
  serviceAccount: string;
  resources: { cpuRequest?: string; memoryRequest?: string; cpuLimit?: string; memoryLimit?: string };
  scaling: { replicas?: number; autoscalingEnabled?: boolean; minReplicas?: number; maxReplicas?: number };
  tolerations: { key?: string; operator?: string; value?: string; effect?: string }[];
  nodeSelector: Record<string, string>;
  affinity?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  env: Record<string, string>;
  args: string[];
  cpuRuntimeClass: string;
  gpuRuntimeClass: string;
}

/** What the runner reads from its config file (a mounted ConfigMap, or a file the local driver writes). */
export interface RunnerConfigFile {
  runnerId: string;
  organizationId: string;
  clusterId: string;
  zone: string;
  runnerGroupId: string;
  revision: number;
  policy: Policy | null;
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

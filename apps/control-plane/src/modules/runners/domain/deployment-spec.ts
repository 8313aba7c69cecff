import { LABELS, MANAGED_BY_CONTROLLER, type DeploymentSpec } from '@paddock/contracts';
import type { RunnerData } from './runner.state';

/** Platform defaults of the runner Deployment; `spec.overrides` members replace them. */
const DEFAULT_RESOURCES = { cpuRequest: '250m', memoryRequest: '256Mi', cpuLimit: '2', memoryLimit: '2Gi' };
const DEFAULT_INIT_RESOURCES = { cpuRequest: '50m', memoryRequest: '64Mi', cpuLimit: '500m', memoryLimit: '128Mi' };

/**
 * Renders the read-only `deploymentSpec` of a runner: what the in-cluster controller applies.
 * Platform-owned labels and environment variables win over user overrides, so an override can
 * never re-point a runner at another organization or identity.
 */
export function renderDeploymentSpec(runner: RunnerData, gatewayServer: string): DeploymentSpec {
  const o = runner.spec.overrides;
  const scaling = o.scaling ?? {};
  return {
    image: runner.target.image,
    imagePullPolicy: 'IfNotPresent',
    gatewayServer,
    serviceAccount: 'paddock-runner',
    resources: { ...DEFAULT_RESOURCES, ...o.resources },
    initResources: { ...DEFAULT_INIT_RESOURCES },
    scaling: {
      replicas: scaling.replicas ?? 1,
      autoscalingEnabled: scaling.autoscalingEnabled ?? false,
      minReplicas: scaling.minReplicas ?? 1,
      maxReplicas: scaling.maxReplicas ?? Math.max(1, scaling.minReplicas ?? 1),
    },
    tolerations: o.tolerations ?? [],
    nodeSelector: o.nodeSelector ?? {},
    ...(o.affinity !== undefined ? { affinity: o.affinity } : {}),
    labels: {
      ...o.labels,
      [LABELS.name]: 'paddock-runner',
      [LABELS.managedBy]: MANAGED_BY_CONTROLLER,
      [LABELS.runnerUid]: runner.uid,
    },
    annotations: o.annotations ?? {},
    env: {
      ...o.env,
      PADDOCK_RUNNER_ID: runner.runnerId,
      PADDOCK_ORGANIZATION_ID: runner.organizationId,
      PADDOCK_CLUSTER_ID: runner.clusterId,
      PADDOCK_ZONE: runner.zone,
      PADDOCK_RUNNER_GROUP_ID: runner.runnerGroupId,
    },
    args: o.args ?? [],
    cpuRuntimeClass: o.cpuRuntimeClass ?? '',
    // No runner applies these (they are refused on write): nothing is shown as if it took effect.
    gpuRuntimeClass: o.gpuRuntimeClass ?? '',
  };
}

import type { DesiredRunner } from '../../src/desired';

/** A runner as the control plane would want it, with nothing but what every driver test needs. */
export function minimalRunner(runnerId: string, uid: string): DesiredRunner {
  return {
    uid,
    organizationId: 'org-1',
    runnerId,
    clusterId: 'c-1',
    zone: 'z',
    runnerGroupId: 'default',
    deleting: false,
    targetRevision: 1,
    targetImage: 'paddock/runner:0.1.0',
    policy: null,
    policyEtag: 'p1',
    deploymentSpec: {
      image: 'paddock/runner:0.1.0',
      imagePullPolicy: 'IfNotPresent',
      gatewayServer: 'nats://nats:4222',
      serviceAccount: 'runner',
      resources: {},
      initResources: { cpuRequest: '50m', memoryRequest: '64Mi' },
      scaling: { replicas: 1 },
      tolerations: [],
      nodeSelector: {},
      labels: {},
      annotations: {},
      env: {},
      args: [],
      cpuRuntimeClass: '',
      gpuRuntimeClass: '',
    },
  };
}

import type { RunnerConnectionStatus, StoredRunnerSpec } from '@paddock/contracts';

/** Before the first heartbeat a runner counts as disconnected. */
export const INITIAL_CONNECTION_STATUS_VALUE: RunnerConnectionStatus = 'RUNNER_CONNECTION_STATUS_DISCONNECTED';

/** Server defaults a spec adopts when omitted. */
export function defaultRunnerSpec(): StoredRunnerSpec {
  return {
    releaseChannel: 'RELEASE_CHANNEL_STABLE',
    maintenancePolicy: { windows: [], exclusions: [] },
    overrides: {},
    enforceResourceLimits: false,
    warmPools: [],
  };
}

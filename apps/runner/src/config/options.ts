import { createBackend } from '../backend/create-backend';
import type { RunnerOptions } from '../runner';
import type { RunnerLogger } from '../service/sandbox-service';
import type { RunnerEnv } from './env';
import { loadRunnerConfigFile } from './runner-config-file';

/** Builds the runner's options from the parsed environment (the config file fills identity gaps). */
export async function optionsFromEnv(env: RunnerEnv, log: RunnerLogger): Promise<RunnerOptions> {
  // The backend needs the runner id up front (it names cgroups and state directories), so a
  // runnerId that only the config file carries is read here once.
  const fileRunnerId = env.PADDOCK_RUNNER_CONFIG
    ? await loadRunnerConfigFile(env.PADDOCK_RUNNER_CONFIG).then(
        (c) => c.file.runnerId,
        () => undefined,
      )
    : undefined;
  const runnerId = env.PADDOCK_RUNNER_ID ?? fileRunnerId;
  if (!runnerId) throw new Error('PADDOCK_RUNNER_ID (or runnerId in the config file) must be set');
  return {
    natsUrl: env.NATS_URL,
    ...(env.NATS_CREDS ? { natsCredsFile: env.NATS_CREDS } : {}),
    backend: createBackend(env, runnerId),
    identity: {
      runnerId,
      ...(env.PADDOCK_ORGANIZATION_ID ? { organizationId: env.PADDOCK_ORGANIZATION_ID } : {}),
      ...(env.PADDOCK_CLUSTER_ID ? { clusterId: env.PADDOCK_CLUSTER_ID } : {}),
      ...(env.PADDOCK_ZONE ? { zone: env.PADDOCK_ZONE } : {}),
      runnerGroupId: env.PADDOCK_RUNNER_GROUP_ID,
    },
    ...(env.PADDOCK_RUNNER_CONFIG ? { configPath: env.PADDOCK_RUNNER_CONFIG } : {}),
    heartbeatIntervalMs: env.PADDOCK_HEARTBEAT_INTERVAL_MS,
    capacity: {
      cpuMillis: env.PADDOCK_CAPACITY_CPU_MILLIS,
      memoryBytes: env.PADDOCK_CAPACITY_MEMORY_BYTES,
      sandboxes: env.PADDOCK_CAPACITY_SANDBOXES,
    },
    caps: {
      pidsMax: env.PADDOCK_SANDBOX_PIDS_MAX,
      diskBytes: env.PADDOCK_SANDBOX_DISK_BYTES,
      openFilesMax: env.PADDOCK_SANDBOX_OPEN_FILES_MAX,
    },
    streamIdleTimeoutMs: env.PADDOCK_STREAM_IDLE_TIMEOUT_MS,
    log,
  };
}

import { join } from 'node:path';
import { createBackend } from '../backend/create-backend';
import { LocalSnapshotStore } from '../snapshots/local-store';
import type { RunnerOptions } from '../runner';
import type { RunnerLogger } from '../service/sandbox-service';
import type { RunnerEnv } from './env';
import { loadRunnerConfigFile, type RunnerConfigFile } from './runner-config-file';

export const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';

/**
 * The config file at start, if the environment names one and it exists (a runner may start before
 * its controller writes it). An invalid file fails the start, naming each bad field.
 */
export async function initialConfigFile(env: RunnerEnv): Promise<RunnerConfigFile | undefined> {
  if (!env.PADDOCK_RUNNER_CONFIG) return undefined;
  try {
    return (await loadRunnerConfigFile(env.PADDOCK_RUNNER_CONFIG)).file;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** The NATS server and credentials file: the environment's, else the config file's. */
export function natsSettings(env: RunnerEnv, file: RunnerConfigFile | undefined): { natsUrl: string; natsCredsFile?: string } {
  const natsCredsFile = env.NATS_CREDS ?? file?.nats.credsFile;
  return { natsUrl: env.NATS_URL ?? file?.nats.url ?? DEFAULT_NATS_URL, ...(natsCredsFile ? { natsCredsFile } : {}) };
}

/** Builds the runner's options from the parsed environment (the config file fills identity and NATS gaps). */
export async function optionsFromEnv(env: RunnerEnv, log: RunnerLogger): Promise<RunnerOptions> {
  // The backend needs the runner id up front (it names cgroups and state directories), and the
  // NATS connection its server, so the config file is read here once; the runner reads it again
  // (and then watches it) for its identity and policy.
  const file = await initialConfigFile(env);
  const runnerId = env.PADDOCK_RUNNER_ID ?? file?.runnerId;
  if (!runnerId) throw new Error('PADDOCK_RUNNER_ID (or runnerId in the config file) must be set');
  return {
    ...natsSettings(env, file),
    backend: createBackend(env, runnerId),
    identity: {
      runnerId,
      ...(env.PADDOCK_ORGANIZATION_ID ? { organizationId: env.PADDOCK_ORGANIZATION_ID } : {}),
      ...(env.PADDOCK_CLUSTER_ID ? { clusterId: env.PADDOCK_CLUSTER_ID } : {}),
      ...(env.PADDOCK_ZONE ? { zone: env.PADDOCK_ZONE } : {}),
      ...(env.PADDOCK_RUNNER_GROUP_ID ? { runnerGroupId: env.PADDOCK_RUNNER_GROUP_ID } : {}),
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
    ...(env.PADDOCK_METRICS_PORT !== undefined ? { metricsPort: env.PADDOCK_METRICS_PORT, metricsHost: env.PADDOCK_METRICS_HOST } : {}),
    snapshotStore: new LocalSnapshotStore(env.PADDOCK_SNAPSHOT_STORE_DIR ?? join(env.PADDOCK_RUNNER_STATE_DIR, 'snapshots')),
    log,
  };
}

/**
 * The environment a controller hands a runner process it starts on this machine. The local driver
 * builds that environment from these names only (never from its own environment wholesale), so
 * nothing the controller holds (its API token, database URL, the machine's variables) reaches a
 * runner, or through it a sandbox. Credentials travel as paths of files the runner alone can read.
 */

/**
 * What a driver may set for each runner (identity, files, NATS). The Kubernetes driver sets them
 * on the pod; the local driver sets where the config file and state are, and puts identity and
 * NATS settings in the config file (0600) instead, so the runner's children inherit none of them.
 */
export const RUNNER_DRIVER_ENV = [
  'NATS_URL',
  'NATS_CREDS',
  'PADDOCK_RUNNER_ID',
  'PADDOCK_ORGANIZATION_ID',
  'PADDOCK_CLUSTER_ID',
  'PADDOCK_ZONE',
  'PADDOCK_RUNNER_GROUP_ID',
  'PADDOCK_RUNNER_BACKEND',
  'PADDOCK_RUNNER_CONFIG',
  'PADDOCK_RUNNER_STATE_DIR',
  'PADDOCK_RUNNER_MODE',
  'PADDOCK_DECOMMISSION_REASON',
] as const;

/**
 * Host settings of the runner that an operator may set on the controller and that runners it
 * starts inherit (capacity offered, per-sandbox host caps, Kubernetes backend options).
 */
export const RUNNER_HOST_SETTINGS_ENV = [
  'PADDOCK_CAPACITY_CPU_MILLIS',
  'PADDOCK_CAPACITY_MEMORY_BYTES',
  'PADDOCK_CAPACITY_SANDBOXES',
  'PADDOCK_SANDBOX_PIDS_MAX',
  'PADDOCK_SANDBOX_DISK_BYTES',
  'PADDOCK_SANDBOX_OPEN_FILES_MAX',
  'PADDOCK_SANDBOX_NAMESPACE',
  'PADDOCK_SANDBOX_RUNTIME_CLASS',
  'PADDOCK_SANDBOX_RUNTIME_CLASSES',
  'PADDOCK_SANDBOX_MAX_GPUS',
  'PADDOCK_SANDBOX_GPU_RESOURCE',
  'PADDOCK_SANDBOX_GPU_TYPES',
  'PADDOCK_SANDBOX_GPU_TYPE_LABEL',
  'PADDOCK_SANDBOX_USER_NAMESPACES',
  'PADDOCK_SANDBOX_CLUSTER_DOMAIN',
  'PADDOCK_HEARTBEAT_INTERVAL_MS',
  'PADDOCK_STREAM_IDLE_TIMEOUT_MS',
  'PADDOCK_IMAGE_ALIASES',
  /** Local backend registry pulls: on/off, plain-HTTP registries, the credentials file, the cache bound. */
  'PADDOCK_IMAGE_PULLS',
  'PADDOCK_REGISTRY_INSECURE',
  'PADDOCK_REGISTRY_AUTH_FILE',
  'PADDOCK_IMAGE_CACHE_BYTES',
  'PADDOCK_SANDBOX_IMAGE_PULL_SECRETS',
  /** The file-system snapshot store shared by the runners of one machine. */
  'PADDOCK_SNAPSHOT_STORE_DIR',
  /** The runner's Prometheus endpoint (port, and the address it listens on). */
  'PADDOCK_METRICS_PORT',
  'PADDOCK_METRICS_HOST',
  /** The runner's log level and format (JSON lines unless `pretty`). */
  'LOG_LEVEL',
  'LOG_FORMAT',
] as const;

/** Process basics a runner needs from the machine: where programs are, locale, time zone, temp dir. */
export const RUNNER_SYSTEM_ENV = ['PATH', 'LANG', 'LANGUAGE', 'TZ', 'TMPDIR'] as const;

/** Locale categories (`LC_ALL`, `LC_CTYPE`, …) pass too. */
const LOCALE_VARIABLE = /^LC_[A-Z]+$/;

/**
 * The part of `env` a runner may inherit: the system basics and the runner host settings. Identity,
 * files and NATS settings are added by the driver on top.
 */
export function runnerInheritedEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const allowed = new Set<string>([...RUNNER_SYSTEM_ENV, ...RUNNER_HOST_SETTINGS_ENV]);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && (allowed.has(k) || LOCALE_VARIABLE.test(k))) out[k] = v;
  }
  return out;
}

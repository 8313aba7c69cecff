import { parseImageAliases } from '../backend/local/options';
import { availableParallelism, totalmem } from 'node:os';
import { LOG_FORMATS, LOG_LEVELS, parseEnvironment, type EnvironmentResult } from '@paddock/kit';
import { z } from 'zod';
import { DEFAULT_GPU_RESOURCE, DEFAULT_GPU_TYPE_LABEL } from '../backend/kubernetes/sandbox-pod';

/** A comma-separated list (empty by default), each entry checked against `pattern`. */
function commaList(pattern: RegExp, message: string) {
  return z
    .string()
    .default('')
    .transform((v) => v.split(',').map((x) => x.trim()).filter(Boolean))
    .pipe(z.array(z.string().regex(pattern, message)));
}

/**
 * The runner's environment, parsed once in `main.ts` before anything starts. Identity variables
 * may also come from the config file (`identity`), which the controller writes; the environment
 * wins when both are set, so a developer can override a single field.
 */
export const RunnerEnvSchema = z.object({
  PADDOCK_RUNNER_ID: z.string().min(1).optional(),
  PADDOCK_ORGANIZATION_ID: z.string().min(1).optional(),
  PADDOCK_CLUSTER_ID: z.string().min(1).optional(),
  PADDOCK_ZONE: z.string().min(1).optional(),
  /** Default: the config file's `identity.runnerGroupId`, else `default`. */
  PADDOCK_RUNNER_GROUP_ID: z.string().min(1).optional(),
  PADDOCK_RUNNER_BACKEND: z.enum(['local', 'kubernetes']).default('local'),
  /**
   * `local` backend: image references that run as a local image, `reference=local-image` pairs
   * separated by commas (e.g. `python:3.11=paddock/base`, the SDKs' default image); empty = none.
   */
  PADDOCK_IMAGE_ALIASES: z.string().default('').superRefine((v, ctx) => {
    try {
      parseImageAliases(v);
    } catch (e) {
      ctx.addIssue({ code: 'custom', message: (e as Error).message });
    }
  }),
  /** `local` backend: pull images that are not local from their registries (`false`: local images only). */
  PADDOCK_IMAGE_PULLS: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  /** `local` backend: registries (`host[:port]`, comma-separated) spoken to over plain HTTP, e.g. `127.0.0.1:5000`; all others HTTPS only. */
  PADDOCK_REGISTRY_INSECURE: commaList(/^[A-Za-z0-9.-]+(:\d{1,5})?$/, 'each must be a registry host[:port]'),
  /**
   * `local` backend: registry credentials, a file in the `auths` format of Docker's config.json
   * and containers-auth.json (`{"auths": {"host": {"auth": "<base64 user:password>"}}}`). Never
   * values in the environment: children would inherit them.
   */
  PADDOCK_REGISTRY_AUTH_FILE: z.string().min(1).optional(),
  /** `local` backend: bound of the pulled-image cache, in bytes (unpacked). */
  PADDOCK_IMAGE_CACHE_BYTES: z.coerce.number().int().positive().default(10 * 1024 ** 3),
  /** `kubernetes` backend: pull secrets (names in the sandbox namespace, comma-separated) every sandbox pod names. */
  PADDOCK_SANDBOX_IMAGE_PULL_SECRETS: commaList(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, 'each must be a Secret name (DNS subdomain)'),
  /** `kubernetes` backend: the namespace of the sandbox pods (default `paddock-sandboxes-<runnerId>`). */
  PADDOCK_SANDBOX_NAMESPACE: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'must be a Kubernetes namespace name (RFC 1123 label: lowercase letters, digits and "-", at most 63)')
    .optional(),
  /** `kubernetes` backend: the cluster's DNS domain, in the names the relay connects to sandbox Services by. */
  PADDOCK_SANDBOX_CLUSTER_DOMAIN: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, 'must be a DNS domain such as cluster.local')
    .default('cluster.local'),
  /** `kubernetes` backend: a RuntimeClass the platform pins for every sandbox (it wins over a requested one). */
  PADDOCK_SANDBOX_RUNTIME_CLASS: z.string().min(1).optional(),
  /** `kubernetes` backend: RuntimeClasses offered to policies (comma-separated; empty = whatever the cluster has). */
  PADDOCK_SANDBOX_RUNTIME_CLASSES: commaList(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, 'each must be a RuntimeClass name (DNS subdomain)'),
  /** `kubernetes` backend: run sandbox pods in user namespaces (`hostUsers: false`); needs Kubernetes 1.30+ nodes that support it. */
  /** `kubernetes` backend: GPUs one sandbox may get (0: GPU requests are refused by the policy engine). */
  PADDOCK_SANDBOX_MAX_GPUS: z.coerce.number().int().nonnegative().default(0),
  /** `kubernetes` backend: the nodes' extended resource for GPUs. */
  PADDOCK_SANDBOX_GPU_RESOURCE: z
    .string()
    .regex(/^([a-z0-9.-]+\/)?[a-z0-9]([-a-z0-9_.]*[a-z0-9])?$/, 'must be an extended resource name such as nvidia.com/gpu')
    .default(DEFAULT_GPU_RESOURCE),
  /** `kubernetes` backend: GPU models offered (comma-separated), selected by `PADDOCK_SANDBOX_GPU_TYPE_LABEL`; empty = a request naming a model is refused. */
  PADDOCK_SANDBOX_GPU_TYPES: commaList(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/, 'each must be a node label value'),
  PADDOCK_SANDBOX_GPU_TYPE_LABEL: z
    .string()
    .regex(/^([a-z0-9.-]+\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/, 'must be a node label key')
    .default(DEFAULT_GPU_TYPE_LABEL),
  PADDOCK_SANDBOX_USER_NAMESPACES: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  /** Wins over the config file's `nats.url`; default `nats://127.0.0.1:4222`. */
  NATS_URL: z.string().min(1).optional(),
  /** `decommission`: reap every sandbox of this runner, publish their end, and exit (the controller runs it). */
  PADDOCK_RUNNER_MODE: z.enum(['serve', 'decommission']).default('serve'),
  /** Why a decommission happens: the runner was deleted, or the platform that started it stopped. */
  PADDOCK_DECOMMISSION_REASON: z.enum(['RUNNER_DELETED', 'RUNNER_STOPPED']).default('RUNNER_DELETED'),
  /**
   * Path of the runner's NATS credentials (`.creds`, private to the runner: mode 0600, or 0440 with
   * the pod's fsGroup), re-read at every reconnect so a rotated file takes effect. Never a value in
   * the environment: children would inherit it. Wins over the config file's `nats.credsFile`;
   * neither = no credentials (a server without auth).
   */
  NATS_CREDS: z.string().min(1).optional(),
  /** YAML or JSON file (`RunnerConfigFileSchema` of @paddock/contracts); watched for changes. */
  PADDOCK_RUNNER_CONFIG: z.string().min(1).optional(),
  /** Where the local backend keeps per-sandbox state (cgroup names, labels, logs) across restarts. */
  PADDOCK_RUNNER_STATE_DIR: z.string().min(1).default('/var/lib/paddock-runner'),
  /**
   * The file-system snapshot store on this machine, shared by its runners (a snapshot taken on one
   * restores on any other pointing at the same directory). Root-only. Default: `snapshots` in
   * the state directory, which the runners of one machine share by default.
   */
  PADDOCK_SNAPSHOT_STORE_DIR: z.string().min(1).optional(),
  /** Port of the runner's Prometheus endpoint (`GET /metrics`: per-sandbox usage and state); unset = none. */
  PADDOCK_METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Address it listens on (default loopback: the figures name tenants' sandboxes). */
  PADDOCK_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  PADDOCK_HEARTBEAT_INTERVAL_MS: z.coerce.number().int().positive().default(5_000),
  /** Capacity offered to sandboxes; defaults to the whole host. */
  PADDOCK_CAPACITY_CPU_MILLIS: z.coerce.number().int().positive().default(availableParallelism() * 1000),
  PADDOCK_CAPACITY_MEMORY_BYTES: z.coerce.number().int().positive().default(totalmem()),
  /**
   * Live sandboxes at most. The bound is the platform's own cost per sandbox, not the sandboxes'
   * requests (those are counted above): bench/density.ts keeps 250 idle ones RUNNING on 2 vCPUs /
   * 24 GiB with exec latency unchanged, at a few MiB of platform memory each; 100 stopped it.
   */
  PADDOCK_CAPACITY_SANDBOXES: z.coerce.number().int().positive().default(500),
  /** Per-sandbox caps that the policy has no field for (they protect the host, not the tenant). */
  PADDOCK_SANDBOX_PIDS_MAX: z.coerce.number().int().positive().default(1024),
  PADDOCK_SANDBOX_DISK_BYTES: z.coerce.number().int().positive().default(1024 ** 3),
  PADDOCK_SANDBOX_OPEN_FILES_MAX: z.coerce.number().int().positive().default(4096),
  /** A stream whose peer grants no credit (or sends nothing) for this long is abandoned. */
  PADDOCK_STREAM_IDLE_TIMEOUT_MS: z.coerce.number().int().positive().default(60_000),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  /** Unset: JSON lines, pretty only when stdout is a terminal. */
  LOG_FORMAT: z.enum(LOG_FORMATS).optional(),
});
export type RunnerEnv = z.infer<typeof RunnerEnvSchema>;

/** Parses the environment; on failure returns a readable list of every bad variable. */
export function parseRunnerEnv(env: NodeJS.ProcessEnv): EnvironmentResult<RunnerEnv> {
  return parseEnvironment(RunnerEnvSchema, env, 'runner');
}

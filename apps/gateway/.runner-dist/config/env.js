"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.RunnerEnvSchema = void 0;
exports.parseRunnerEnv = parseRunnerEnv;
const node_os_1 = require("node:os");
const zod_1 = require("zod");
/**
 * The runner's environment, parsed once in `main.ts` before anything starts. Identity variables
 * may also come from the config file (`identity`), which the controller writes; the environment
 * wins when both are set, so a developer can override a single field.
 */
exports.RunnerEnvSchema = zod_1.z.object({
    PADDOCK_RUNNER_ID: zod_1.z.string().min(1).optional(),
    PADDOCK_ORGANIZATION_ID: zod_1.z.string().min(1).optional(),
    PADDOCK_CLUSTER_ID: zod_1.z.string().min(1).optional(),
    PADDOCK_ZONE: zod_1.z.string().min(1).optional(),
    PADDOCK_RUNNER_GROUP_ID: zod_1.z.string().min(1).default('default'),
    PADDOCK_RUNNER_BACKEND: zod_1.z.enum(['local', 'kubernetes']).default('local'),
    NATS_URL: zod_1.z.string().min(1).default('nats://127.0.0.1:4222'),
    /** YAML or JSON file `{ runnerId?, revision, policy, policyEtag, identity }`; watched for changes. */
    PADDOCK_RUNNER_CONFIG: zod_1.z.string().min(1).optional(),
    /** Where the local backend keeps per-sandbox state (cgroup names, labels, logs) across restarts. */
    PADDOCK_RUNNER_STATE_DIR: zod_1.z.string().min(1).default('/var/lib/paddock-runner'),
    PADDOCK_HEARTBEAT_INTERVAL_MS: zod_1.z.coerce.number().int().positive().default(5_000),
    /** Capacity offered to sandboxes; defaults to the whole host. */
    PADDOCK_CAPACITY_CPU_MILLIS: zod_1.z.coerce.number().int().positive().default((0, node_os_1.availableParallelism)() * 1000),
    PADDOCK_CAPACITY_MEMORY_BYTES: zod_1.z.coerce.number().int().positive().default((0, node_os_1.totalmem)()),
    PADDOCK_CAPACITY_SANDBOXES: zod_1.z.coerce.number().int().positive().default(100),
    /** Per-sandbox caps that the policy has no field for (they protect the host, not the tenant). */
    PADDOCK_SANDBOX_PIDS_MAX: zod_1.z.coerce.number().int().positive().default(1024),
    PADDOCK_SANDBOX_DISK_BYTES: zod_1.z.coerce.number().int().positive().default(1024 ** 3),
    PADDOCK_SANDBOX_OPEN_FILES_MAX: zod_1.z.coerce.number().int().positive().default(4096),
    /** A stream whose peer grants no credit (or sends nothing) for this long is abandoned. */
    PADDOCK_STREAM_IDLE_TIMEOUT_MS: zod_1.z.coerce.number().int().positive().default(60_000),
});
/** Parses the environment; on failure returns a readable list of every bad variable. */
function parseRunnerEnv(env) {
    const r = exports.RunnerEnvSchema.safeParse(env);
    if (r.success)
        return { ok: true, env: r.data };
    return { ok: false, errors: r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`) };
}
//# sourceMappingURL=env.js.map
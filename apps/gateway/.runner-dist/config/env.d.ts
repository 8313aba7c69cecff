import { z } from 'zod';
/**
 * The runner's environment, parsed once in `main.ts` before anything starts. Identity variables
 * may also come from the config file (`identity`), which the controller writes; the environment
 * wins when both are set, so a developer can override a single field.
 */
export declare const RunnerEnvSchema: z.ZodObject<{
    PADDOCK_RUNNER_ID: z.ZodOptional<z.ZodString>;
    PADDOCK_ORGANIZATION_ID: z.ZodOptional<z.ZodString>;
    PADDOCK_CLUSTER_ID: z.ZodOptional<z.ZodString>;
    PADDOCK_ZONE: z.ZodOptional<z.ZodString>;
    PADDOCK_RUNNER_GROUP_ID: z.ZodDefault<z.ZodString>;
    PADDOCK_RUNNER_BACKEND: z.ZodDefault<z.ZodEnum<{
        kubernetes: "kubernetes";
        local: "local";
    }>>;
    NATS_URL: z.ZodDefault<z.ZodString>;
    PADDOCK_RUNNER_CONFIG: z.ZodOptional<z.ZodString>;
    PADDOCK_RUNNER_STATE_DIR: z.ZodDefault<z.ZodString>;
    PADDOCK_HEARTBEAT_INTERVAL_MS: z.ZodDefault<z.ZodCoercedNumber<unknown>>;
    PADDOCK_CAPACITY_CPU_MILLIS: z.ZodDefault<z.ZodCoercedNumber<unknown>>;
    PADDOCK_CAPACITY_MEMORY_BYTES: z.ZodDefault<z.ZodCoercedNumber<unknown>>;
    PADDOCK_CAPACITY_SANDBOXES: z.ZodDefault<z.ZodCoercedNumber<unknown>>;
    PADDOCK_SANDBOX_PIDS_MAX: z.ZodDefault<z.ZodCoercedNumber<unknown>>;
    PADDOCK_SANDBOX_DISK_BYTES: z.ZodDefault<z.ZodCoercedNumber<unknown>>;
    PADDOCK_SANDBOX_OPEN_FILES_MAX: z.ZodDefault<z.ZodCoercedNumber<unknown>>;
    PADDOCK_STREAM_IDLE_TIMEOUT_MS: z.ZodDefault<z.ZodCoercedNumber<unknown>>;
}, z.core.$strip>;
export type RunnerEnv = z.infer<typeof RunnerEnvSchema>;
/** Parses the environment; on failure returns a readable list of every bad variable. */
export declare function parseRunnerEnv(env: NodeJS.ProcessEnv): {
    ok: true;
    env: RunnerEnv;
} | {
    ok: false;
    errors: string[];
};

"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.optionsFromEnv = optionsFromEnv;
require("reflect-metadata");
const core_1 = require("@nestjs/core");
const app_module_1 = require("./app.module");
const create_backend_1 = require("./backend/create-backend");
const env_1 = require("./config/env");
const runner_config_file_1 = require("./config/runner-config-file");
/** Builds the runner's options from the parsed environment (the config file fills identity gaps). */
async function optionsFromEnv(env) {
    // The backend needs the runner id up front (it names cgroups and state directories), so a
    // runnerId that only the config file carries is read here once.
    const fileRunnerId = env.PADDOCK_RUNNER_CONFIG
        ? await (0, runner_config_file_1.loadRunnerConfigFile)(env.PADDOCK_RUNNER_CONFIG).then((c) => c.file.runnerId, () => undefined)
        : undefined;
    const runnerId = env.PADDOCK_RUNNER_ID ?? fileRunnerId;
    if (!runnerId)
        throw new Error('PADDOCK_RUNNER_ID (or runnerId in the config file) must be set');
    return {
        natsUrl: env.NATS_URL,
        backend: (0, create_backend_1.createBackend)(env, runnerId),
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
    };
}
async function main() {
    const parsed = (0, env_1.parseRunnerEnv)(process.env);
    if (!parsed.ok) {
        process.stderr.write(`Invalid runner configuration:\n  ${parsed.errors.join('\n  ')}\n`);
        process.exit(2);
    }
    const options = await optionsFromEnv(parsed.env);
    const app = await core_1.NestFactory.createApplicationContext(app_module_1.RunnerModule.forRoot(options), { logger: ['error', 'warn'] });
    app.enableShutdownHooks();
}
if (require.main === module) {
    main().catch((e) => {
        process.stderr.write(`Runner failed to start: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
        process.exit(1);
    });
}
//# sourceMappingURL=main.js.map
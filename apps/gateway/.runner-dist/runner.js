"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.consoleLogger = void 0;
exports.startRunner = startRunner;
const node_crypto_1 = require("node:crypto");
const transport_node_1 = require("@nats-io/transport-node");
const contracts_1 = require("@paddock/contracts");
const runner_config_file_1 = require("./config/runner-config-file");
const heartbeat_1 = require("./nats/heartbeat");
const rpc_server_1 = require("./nats/rpc-server");
const stream_handlers_1 = require("./nats/stream-handlers");
const policy_holder_1 = require("./policy/policy-holder");
const sandbox_service_1 = require("./service/sandbox-service");
exports.consoleLogger = {
    info: (msg, fields) => process.stderr.write(`${JSON.stringify({ level: 'info', msg, ...fields })}\n`),
    warn: (msg, fields) => process.stderr.write(`${JSON.stringify({ level: 'warn', msg, ...fields })}\n`),
    error: (msg, fields) => process.stderr.write(`${JSON.stringify({ level: 'error', msg, ...fields })}\n`),
};
function resolveIdentity(env, file) {
    const id = file?.file.identity ?? {};
    const runnerId = env.runnerId ?? file?.file.runnerId;
    const organizationId = env.organizationId ?? id.organizationId;
    const missing = [
        ...(runnerId ? [] : ['PADDOCK_RUNNER_ID (or runnerId in the config file)']),
        ...(organizationId ? [] : ['PADDOCK_ORGANIZATION_ID (or identity.organizationId in the config file)']),
    ];
    if (!runnerId || !organizationId)
        throw new Error(`runner identity incomplete: ${missing.join(', ')} must be set`);
    return {
        runnerId,
        organizationId,
        clusterId: env.clusterId ?? id.clusterId ?? 'local',
        zone: env.zone ?? id.zone ?? 'local',
        runnerGroupId: env.runnerGroupId ?? id.runnerGroupId ?? 'default',
    };
}
/**
 * Starts a runner: config → NATS → adopt or reap what the backend still runs → serve RPCs →
 * heartbeats. Recovery comes before serving so no request sees a half-known registry.
 */
async function startRunner(opts) {
    const log = opts.log ?? exports.consoleLogger;
    const clock = opts.clock ?? { now: () => new Date() };
    const policy = new policy_holder_1.PolicyHolder();
    let revision = 0;
    let healthDetail;
    const applyConfig = (cfg) => {
        policy.set(cfg.file.policy, cfg.file.policyEtag);
        revision = cfg.file.revision;
        healthDetail = undefined;
    };
    // The heartbeat starts after the first config read; until then a change has nothing to announce.
    const announce = { beat: () => undefined };
    const watcher = opts.configPath
        ? new runner_config_file_1.ConfigFileWatcher(opts.configPath, (cfg) => {
            applyConfig(cfg);
            log.info('Applied runner config', { policyEtag: cfg.file.policyEtag ?? null, revision: cfg.file.revision });
            announce.beat();
        }, (err) => {
            healthDetail = `config file rejected, previous config kept: ${err.message}`;
            log.warn('Rejected runner config', { error: err.message });
            announce.beat();
        }, opts.configPollMs)
        : undefined;
    const first = await watcher?.start();
    if (first)
        applyConfig(first);
    const identity = resolveIdentity(opts.identity, first);
    const nc = await (0, transport_node_1.connect)({ servers: opts.natsUrl, name: `paddock-runner-${identity.runnerId}`, maxReconnectAttempts: -1 });
    const stateSubject = contracts_1.subjects.sandboxState(identity.runnerId);
    const publishState = (evt) => {
        if (!nc.isClosed())
            nc.publish(stateSubject, JSON.stringify(evt));
    };
    const service = new sandbox_service_1.SandboxService({
        backend: opts.backend,
        identity,
        policy,
        capacity: opts.capacity,
        caps: opts.caps,
        publishState,
        clock,
        log,
    });
    const recovery = await service.recover();
    const streams = new stream_handlers_1.StreamHandlers({
        nc,
        runnerId: identity.runnerId,
        service,
        backend: opts.backend,
        idleTimeoutMs: opts.streamIdleTimeoutMs,
        log,
    });
    const rpc = new rpc_server_1.RunnerRpcServer(nc, identity.runnerId, service, opts.backend, streams, log);
    rpc.start();
    await nc.flush();
    const instanceId = (0, node_crypto_1.randomUUID)();
    const startedAt = clock.now().toISOString();
    const heartbeat = new heartbeat_1.HeartbeatPublisher(nc, identity.runnerId, opts.heartbeatIntervalMs, (sequence, sentAt) => {
        const active = policy.current();
        return {
            ...identity,
            revision,
            policyEtag: active.etag,
            usingDefaultPolicy: active.usingDefault,
            backend: opts.backend.kind,
            health: healthDetail ? contracts_1.RUNNER_HEALTHS[1] : contracts_1.RUNNER_HEALTHS[0],
            ...(healthDetail ? { healthDetail } : {}),
            capabilities: opts.backend.capabilities(),
            capacity: service.capacity(),
            instanceId,
            sequence,
            startedAt,
            sentAt: sentAt.toISOString(),
            intervalMs: opts.heartbeatIntervalMs,
        };
    });
    heartbeat.start();
    announce.beat = () => heartbeat.beat();
    log.info('Runner started', { runnerId: identity.runnerId, adopted: recovery.adopted.length, reaped: recovery.reaped.length });
    let stopped = false;
    return {
        identity,
        instanceId,
        nc,
        service,
        policy,
        recovery,
        configSettled: async () => watcher?.settled(),
        async stop(stopOpts = {}) {
            if (stopped)
                return;
            stopped = true;
            watcher?.stop();
            heartbeat.stop();
            await rpc.stop();
            service.close();
            await nc.drain().catch(() => undefined);
            if (!stopOpts.keepBackend)
                await opts.backend.close();
            log.info('Runner stopped', { runnerId: identity.runnerId });
        },
    };
}
//# sourceMappingURL=runner.js.map
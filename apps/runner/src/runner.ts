import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { RUNNER_HEALTHS, subjects, type RunnerHeartbeat, type SandboxStateEvent, type WarmPool } from '@paddock/contracts';
import { createServiceLogger, type LogFormat, type LogLevel, type ServiceLogger } from '@paddock/kit';
import { connectNats } from '@paddock/nats';
import type { SandboxBackend } from './backend/sandbox-backend';
import { ConfigFileWatcher, type LoadedConfig } from './config/runner-config-file';
import { HeartbeatPublisher } from './nats/heartbeat';
import { RunnerRpcServer } from './nats/rpc-server';
import { StreamHandlers } from './nats/stream-handlers';
import { PolicyHolder } from './policy/policy-holder';
import type { SandboxHostCaps } from './service/launch-spec';
import type { SnapshotStore } from './snapshots/snapshot-store';
import { renderSandboxMetrics, startMetricsServer } from './observability/sandbox-metrics';
import { WarmPoolBackend } from './service/warm-pools';
import {
  SandboxService,
  type Clock,
  type RecoveryReport,
  type RunnerCapacityLimits,
  type RunnerIdentity,
  type RunnerLogger,
} from './service/sandbox-service';

export interface RunnerOptions {
  natsUrl: string;
  /** The runner's `.creds` file (its NATS user, permitted only this runner's subjects). */
  natsCredsFile?: string;
  backend: SandboxBackend;
  /** Identity from the environment; fields left out come from the config file's `identity`. */
  identity: Partial<RunnerIdentity>;
  configPath?: string;
  heartbeatIntervalMs: number;
  capacity: RunnerCapacityLimits;
  caps: SandboxHostCaps;
  streamIdleTimeoutMs: number;
  clock?: Clock;
  log?: RunnerLogger;
  /** Period of the config file's stat fallback. */
  configPollMs?: number;
  /** The file-system snapshot store; none = snapshots refused by name. */
  snapshotStore?: SnapshotStore;
  /** Serve Prometheus metrics (per-sandbox usage and state) on this port; absent = none. */
  metricsPort?: number;
  metricsHost?: string;
}

export interface RunningRunner {
  readonly identity: RunnerIdentity;
  readonly instanceId: string;
  readonly nc: NatsConnection;
  readonly service: SandboxService;
  readonly policy: PolicyHolder;
  readonly recovery: RecoveryReport;
  /** `http://host:port/metrics` when the runner serves metrics. */
  readonly metricsUrl?: string;
  /** The warm pools in front of the backend (transparent while the config file declares none). */
  readonly warmPools: WarmPoolBackend;
  /** Resolves once every config-file change seen so far has been applied. */
  configSettled(): Promise<void>;
  /**
   * Graceful stop: stop taking requests, stop heartbeats, drain NATS. Sandboxes keep running (the
   * next runner process adopts them); the backend is closed too unless `keepBackend`.
   */
  stop(opts?: { keepBackend?: boolean }): Promise<void>;
}

/** How long an ended sandbox stays answerable by `get`/`list` on the runner. */
const TERMINAL_RETENTION_MS = 60 * 60 * 1000;

/** The runner process's logger (JSON lines, pretty at a terminal). */
export function runnerLogger(level: LogLevel = 'info', format?: LogFormat): ServiceLogger {
  return createServiceLogger({ service: 'runner', level, ...(format ? { format } : {}) });
}

function resolveIdentity(env: Partial<RunnerIdentity>, file: LoadedConfig | undefined): RunnerIdentity {
  const id = file?.file.identity ?? {};
  const runnerId = env.runnerId ?? file?.file.runnerId;
  const organizationId = env.organizationId ?? id.organizationId;
  const missing = [
    ...(runnerId ? [] : ['PADDOCK_RUNNER_ID (or runnerId in the config file)']),
    ...(organizationId ? [] : ['PADDOCK_ORGANIZATION_ID (or identity.organizationId in the config file)']),
  ];
  if (!runnerId || !organizationId) throw new Error(`runner identity incomplete: ${missing.join(', ')} must be set`);
  return {
    runnerId,
    organizationId,
    clusterId: env.clusterId ?? id.clusterId ?? 'local',
    zone: env.zone ?? id.zone ?? 'local',
    runnerGroupId: env.runnerGroupId ?? id.runnerGroupId ?? 'default',
  };
}

/** DEGRADED with every reason given, or HEALTHY. */
function healthOf(reasons: (string | undefined)[]): Pick<RunnerHeartbeat, 'health' | 'healthDetail'> {
  const detail = reasons.filter((r): r is string => Boolean(r)).join('; ');
  return detail ? { health: RUNNER_HEALTHS[1], healthDetail: detail } : { health: RUNNER_HEALTHS[0] };
}

/**
 * Starts a runner: config → NATS → adopt or reap what the backend still runs → serve RPCs →
 * heartbeats. Recovery comes before serving so no request sees a half-known registry.
 */
export async function startRunner(opts: RunnerOptions): Promise<RunningRunner> {
  const log = opts.log ?? runnerLogger();
  const clock = opts.clock ?? { now: () => new Date() };
  const policy = new PolicyHolder();
  let revision = 0;
  let healthDetail: string | undefined;

  // Pools start filling once the runner has recovered what the backend still runs (leftover warm
  // sandboxes are reaped then, and capacity is known); until then the latest list waits here.
  let poolDefs: WarmPool[] = [];
  const pools: { live?: WarmPoolBackend } = {};
  const applyConfig = (cfg: LoadedConfig): boolean => {
    const r = policy.apply(cfg.file.policy, cfg.file.policyEtag);
    if (!r.ok) {
      const list = r.violations.map((v) => `policy.${v.field} (${v.rule}): ${v.description}`).join('; ');
      healthDetail = `config file policy rejected, previous policy kept: ${list}`;
      log.warn('Rejected runner policy', { policyEtag: cfg.file.policyEtag ?? null, violations: r.violations.length, detail: list });
      return false;
    }
    revision = cfg.file.revision;
    healthDetail = undefined;
    poolDefs = cfg.file.warmPools ?? [];
    // After the policy: templates resolve against the policy that now governs creates.
    pools.live?.configure(poolDefs);
    return true;
  };
  // The heartbeat starts after the first config read; until then a change has nothing to announce.
  const announce = { beat: (): void => undefined };
  const watcher = opts.configPath
    ? new ConfigFileWatcher(
        opts.configPath,
        (cfg) => {
          if (applyConfig(cfg)) log.info('Applied runner config', { policyEtag: cfg.file.policyEtag ?? null, revision: cfg.file.revision });
          announce.beat();
        },
        (err) => {
          healthDetail = `config file rejected, previous config kept: ${err.message}`;
          log.warn('Rejected runner config', { error: err.message });
          announce.beat();
        },
        opts.configPollMs,
      )
    : undefined;
  const first = await watcher?.start();
  if (first) applyConfig(first);
  const identity = resolveIdentity(opts.identity, first);

  const nc = await connectNats({ servers: opts.natsUrl, credsFile: opts.natsCredsFile, name: `paddock-runner-${identity.runnerId}`, maxReconnectAttempts: -1 });
  const stateSubject = subjects.sandboxState(identity.runnerId);
  const publishState = (evt: SandboxStateEvent): void => {
    if (!nc.isClosed()) nc.publish(stateSubject, JSON.stringify(evt));
  };
  // Takes are tied to their creates in the backend's state dir (a local backend's), to survive a restart.
  const stateDir = 'stateDir' in opts.backend && typeof opts.backend.stateDir === 'string' ? opts.backend.stateDir : undefined;
  const warmPools = new WarmPoolBackend({ inner: opts.backend, policy, identity, caps: opts.caps, clock, log, ...(stateDir ? { tieJournal: join(stateDir, 'warm-taken.jsonl') } : {}) });
  const backend = warmPools;
  const service = new SandboxService({
    backend,
    identity,
    policy,
    capacity: opts.capacity,
    caps: opts.caps,
    publishState,
    clock,
    log,
    ...(opts.snapshotStore ? { snapshotStore: opts.snapshotStore } : {}),
    warm: warmPools,
  });
  warmPools.bindCapacity(() => service.capacity());
  const recovery = await service.recover();
  pools.live = warmPools;
  warmPools.configure(poolDefs);

  const streams = new StreamHandlers({
    nc,
    runnerId: identity.runnerId,
    service,
    backend,
    idleTimeoutMs: opts.streamIdleTimeoutMs,
    log,
  });
  const rpc = new RunnerRpcServer(nc, identity.runnerId, service, backend, streams, log);
  rpc.start();
  await nc.flush();

  const instanceId = randomUUID();
  const startedAt = clock.now().toISOString();
  const heartbeat = new HeartbeatPublisher(nc, identity.runnerId, opts.heartbeatIntervalMs, (sequence, sentAt): RunnerHeartbeat => {
    const active = policy.current();
    return {
      ...identity,
      revision,
      policyEtag: active.etag,
      usingDefaultPolicy: active.usingDefault,
      backend: opts.backend.kind,
      ...healthOf([healthDetail, opts.backend.degraded?.()]),
      capabilities: opts.backend.capabilities(),
      capacity: service.capacity(),
      ...(poolDefs.length > 0 ? { warmPoolStatus: warmPools.status() } : {}),
      instanceId,
      sequence,
      startedAt,
      sentAt: sentAt.toISOString(),
      intervalMs: opts.heartbeatIntervalMs,
      sandboxUsage: service.sampleUsage(),
    };
  });
  heartbeat.start();
  announce.beat = () => heartbeat.beat();
  const pruner = setInterval(() => service.pruneTerminated(TERMINAL_RETENTION_MS), 60_000);
  pruner.unref();
  const metrics =
    opts.metricsPort === undefined
      ? undefined
      : await startMetricsServer(opts.metricsPort, opts.metricsHost ?? '127.0.0.1', () => renderSandboxMetrics(identity.runnerId, service.metricsRows(), service.capacity()));
  log.info('Runner started', { runnerId: identity.runnerId, adopted: recovery.adopted.length, reaped: recovery.reaped.length });

  let stopped = false;
  return {
    identity,
    instanceId,
    nc,
    service,
    policy,
    recovery,
    ...(metrics ? { metricsUrl: metrics.url } : {}),
    warmPools,
    configSettled: async () => watcher?.settled(),
    async stop(stopOpts = {}) {
      if (stopped) return;
      stopped = true;
      watcher?.stop();
      heartbeat.stop();
      clearInterval(pruner);
      await metrics?.close();
      await rpc.stop();
      service.close();
      await nc.drain().catch(() => undefined);
      if (!stopOpts.keepBackend) await warmPools.close();
      log.info('Runner stopped', { runnerId: identity.runnerId });
    },
  };
}

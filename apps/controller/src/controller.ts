import { hostname } from 'node:os';
import { KubeConfig } from '@kubernetes/client-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { createServiceLogger } from '@paddock/kit';
import { CP_RUNNER_LOG_V1, subjects, type ControllerReadModels, type RunnerInstallReport } from '@paddock/contracts';
import { createPostgresDb, LogFollower } from '@paddock/event-store';
import { connectNats } from '@paddock/nats';
import type { ControllerEnv } from './config';
import { ControlPlaneClient } from './cp-client';
import { DesiredSource } from './desired-source';
import type { ClusterDriver } from './drivers/driver';
import { KubernetesDriver } from './drivers/kubernetes.driver';
import { LocalDriver } from './drivers/local.driver';
import { LeaseElector } from './lease';
import { HeartbeatTracker } from './heartbeats';
import { RunnerReconciler } from './reconcile/runner.reconciler';
import { WorkQueue } from './reconcile/work-queue';
import { withBackoff } from './retry';
import { ControlPlaneRunnerCredentials } from './runner-credentials';

export interface ControllerHandle {
  clusterId: string;
  organizationId: string;
  reconciler: RunnerReconciler;
  queue: WorkQueue;
  /** Resolves when every runner has been reconciled once after the call. */
  resync(): Promise<void>;
  stop(): Promise<void>;
}

export type Log = (msg: string, fields?: Record<string, unknown>) => void;

/**
 * Wires one controller: registers its cluster, follows the runner event log (hints), reconciles
 * each runner of its cluster with the driver, and reports install status over NATS.
 */
export interface StartOptions {
  driver?: (nc: NatsConnection, hb: HeartbeatTracker) => ClusterDriver;
  /** Kubernetes driver: the cluster to talk to (default: in-cluster config, else KUBECONFIG). */
  kubeConfig?: KubeConfig;
  log?: Log;
  /** Aborts start-up (SIGTERM while still waiting for the control plane). */
  signal?: AbortSignal;
}

function defaultKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  if (process.env.KUBERNETES_SERVICE_HOST) kc.loadFromCluster();
  else kc.loadFromDefault();
  return kc;
}

export async function startController(env: ControllerEnv, opts: StartOptions = {}): Promise<ControllerHandle> {
  const log: Log = opts.log ?? createServiceLogger({ service: 'controller' }).info;
  const cp = new ControlPlaneClient(env.PADDOCK_CONTROL_PLANE_URL, env.PADDOCK_API_KEY);
  // The control plane may start after the controller (pnpm start): retry with backoff, not crash.
  const cluster = await withBackoff(() => cp.registerCluster(env.PADDOCK_CLUSTER_NAME, env.PADDOCK_ZONE), {
    signal: opts.signal,
    onRetry: (attempt, delayMs, e) => log('Cluster registration failed; retrying', { attempt, delayMs, error: e instanceof Error ? e.message : String(e) }),
  });
  const organizationId = cluster.organizationId ?? (await cp.whoami()).organizationId;
  const controllerId = env.PADDOCK_CONTROLLER_ID ?? `${hostname()}-${process.pid}`;
  // Local driver: a newer controller instance always carries a larger token, so the control plane
  // drops reports of an instance that was paused and resumed after a successor started. Kubernetes
  // driver: the Lease term (leaseTransitions) plays that role.
  const startToken = Date.now();
  let stopping = false;
  log('Controller starting', { clusterId: cluster.id, cluster: env.PADDOCK_CLUSTER_NAME, driver: env.PADDOCK_CONTROLLER_DRIVER, controllerId });

  const nc = await connectNats({ servers: env.NATS_URL, credsFile: env.NATS_CREDS, name: `paddock-controller-${controllerId}`, maxReconnectAttempts: -1, waitOnFirstConnect: true });
  const credentials = env.NATS_CREDS ? new ControlPlaneRunnerCredentials(nc, cluster.id) : undefined;
  const db = createPostgresDb<ControllerReadModels>(env.DATABASE_URL, { max: 4, applicationName: 'paddock-controller' });
  const source = new DesiredSource(db, cluster.id);
  // The heartbeat tracker exists before the queue (the driver needs it), so it reaches the queue late.
  const queueRef: { current?: WorkQueue } = {};
  const uidByRunnerId = new Map<string, string>();
  const heartbeats = new HeartbeatTracker(
    () => cluster.id,
    (runnerId) => {
      const uid = uidByRunnerId.get(runnerId);
      if (uid) queueRef.current?.add(uid);
    },
  );
  heartbeats.start(nc);
  const kubernetes = env.PADDOCK_CONTROLLER_DRIVER === 'kubernetes';
  const kc = kubernetes ? (opts.kubeConfig ?? defaultKubeConfig()) : undefined;
  const driver: ClusterDriver =
    opts.driver?.(nc, heartbeats) ??
    (kc
      ? new KubernetesDriver(kc, { natsUrl: env.NATS_URL, credentials, clusterId: cluster.id, mayWrite: () => isLeader() })
      : new LocalDriver({ stateDir: env.PADDOCK_CONTROLLER_STATE_DIR, runnerEntry: env.PADDOCK_RUNNER_ENTRY, natsUrl: env.NATS_URL, credentials, heartbeats }));
  const elector = kc
    ? new LeaseElector(
        kc,
        {
          namespace: env.PADDOCK_LEASE_NAMESPACE,
          name: `paddock-controller-${cluster.id}`,
          identity: controllerId,
          leaseDurationSeconds: env.PADDOCK_LEASE_DURATION_S,
          renewEveryMs: env.PADDOCK_LEASE_RENEW_MS,
        },
        {
          onLeading: (term) => {
            if (stopping) return;
            log('Leadership acquired', { term });
            void follower.start().then(() => resync()).catch((e: unknown) => log('Start after election failed', { error: String(e) }));
          },
          onLost: () => {
            log('Leadership lost; stepping down');
            void follower.stop();
          },
        },
      )
    : undefined;
  const fencingToken = (): number => (elector ? elector.fencingToken : startToken);
  const isLeader = (): boolean => !elector || elector.isLeader;
  const sink = {
    publish: async (report: RunnerInstallReport): Promise<void> => {
      // A deposed leader stays quiet (the control plane would drop its older token anyway).
      if (!isLeader()) return;
      nc.publish(subjects.installReport(cluster.id), JSON.stringify(report));
      await nc.flush();
      log('Install status reported', { runnerId: report.runnerId, installStatus: report.installStatus, activeRevision: report.activeRevision, gone: report.gone });
    },
  };
  const reconciler = new RunnerReconciler(source, driver, sink, { clusterId: cluster.id, controllerId, fencingToken, now: () => new Date(), log });
  // A deposed leader must not write: leadership is checked right before each reconcile.
  // A key that arrives while leadership is in doubt (renewal late under load) is looked at again
  // shortly instead of dropped; a replica that does not lead gets no keys (no log follower, no resync).
  const q = new WorkQueue(async (uid) => (isLeader() ? reconciler.reconcile(uid) : { requeueAfterMs: 1_000 }), { onError: (uid, e) => log('Reconcile failed', { uid, error: e instanceof Error ? e.message : String(e) }) });
  queueRef.current = q;

  const resync = async (): Promise<void> => {
    if (stopping || !isLeader() || !(await source.ready())) return;
    // The view may appear after start (the control plane migrates later): follow it from then on.
    if (!follower.isRunning && !stopping) await follower.start();
    for (const d of await source.all()) {
      uidByRunnerId.set(d.runnerId, d.uid);
      q.add(d.uid);
    }
    await reconciler.collectGarbage();
    await q.idle();
  };

  if (env.PADDOCK_DECLARE_DEFAULT_RUNNER) {
    const r = await cp.ensureRunner(env.PADDOCK_DECLARE_DEFAULT_RUNNER, cluster.id, env.PADDOCK_ZONE, env.PADDOCK_DECLARE_DEFAULT_RUNNER_POLICY);
    log('Default runner declared', { runnerId: env.PADDOCK_DECLARE_DEFAULT_RUNNER, result: r });
  }

  // Events are wake-up hints (level-based reconcile): the follower's cursor lives in memory and
  // starts at the log's horizon, and the resync that follows every start covers everything
  // before it, so the controller's database role needs to write nothing (not even a checkpoint).
  // The view carries positions and runner uids of this cluster only, no payloads.
  const follower = new LogFollower(db, {
    relation: CP_RUNNER_LOG_V1.name,
    columns: ['runner_uid'] satisfies (keyof typeof CP_RUNNER_LOG_V1.columns)[],
    handle: (positions) => {
      for (const p of positions) q.add(CP_RUNNER_LOG_V1.row.shape.runner_uid.parse(p.columns.runner_uid));
    },
    onError: (e) => log('Event log consumer error', { error: e instanceof Error ? e.message : String(e) }),
  });
  if (elector) {
    elector.start();
  } else {
    await resync();
  }
  const timer = setInterval(() => void resync().catch((e: unknown) => log('Resync failed', { error: String(e) })), env.PADDOCK_RESYNC_MS);
  timer.unref();

  return {
    clusterId: cluster.id,
    organizationId,
    reconciler,
    queue: q,
    resync,
    async stop() {
      stopping = true;
      clearInterval(timer);
      elector?.stop();
      q.stop();
      heartbeats.stop();
      await follower.stop();
      if (env.PADDOCK_CONTROLLER_STOP_RUNNERS_ON_EXIT) {
        log('Stopping the runners this controller started, and their sandboxes');
        await driver.stopRunners?.();
      }
      await driver.close();
      await nc.drain();
      await db.destroy();
    },
  };
}

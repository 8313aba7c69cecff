import { SnapshotRepository } from './snapshots/snapshot.repository';
import { SnapshotsService } from './snapshots/snapshots.service';
import 'reflect-metadata';
import websocket from '@fastify/websocket';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats } from '@paddock/nats';
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { parseJsonBody } from '@paddock/contracts';
import { createServiceLogger, nestLoggerFor, requestIdFor, withRequestId, REQUEST_ID_HEADER, type LogLevel, type ServiceLogger } from '@paddock/kit';
import { GatewayModule } from './app.module';
import { TokenAuthenticator } from './auth/token-authenticator';
import type { GatewayConfig } from './config/env';
import { createGatewayDb, type GatewayDatabase } from './db/database';
import { migrateGatewayToLatest } from './db/migrate';
import { registerCreateFastPath } from './http/create-fast-path';
import { registerUnaryExecFastPath } from './http/exec-fast-path';
import { installConsoleCors } from './http/cors';
import { registerExecWebSocket } from './http/exec-websocket';
import { sandboxServiceHandler, serveConnectOnRestPort, startGrpcServer, type RunningGrpcServer } from './grpc/grpc-server';
import { selectExecProtocol } from './http/websocket-bearer';
import { AUTH, HEALTH, LIFECYCLE, METRICS, OPS, SNAPSHOTS, type HealthProbe } from './http/tokens';
import { GatewayMetrics } from './observability/metrics';
import { PlacementService } from './placement/placement.service';
import { HeartbeatListener } from './runners/heartbeat.listener';
import { PolicySource } from './runners/policy-source';
import { RunnerClient } from './runners/runner-client';
import { RunnerRegistry } from './runners/runner-registry';
import { Reconciler } from './sandboxes/reconciler';
import { SandboxLifecycleService } from './sandboxes/sandbox-lifecycle.service';
import { SecretResolver } from './sandboxes/secret-resolver';
import { SandboxOpsService } from './sandboxes/sandbox-ops.service';
import { SandboxRouteCache } from './sandboxes/sandbox-route-cache';
import { SandboxRepository } from './sandboxes/sandbox.repository';
import { SourceGate } from './runners/source-gate';
import { SandboxChangeBroadcast } from './sandboxes/change-broadcast';
import { SandboxStateWaiters } from './sandboxes/state-waiters';
import { StateEventsConsumer } from './sandboxes/state-events.consumer';
import { CreatesInFlight } from './sandboxes/creates-in-flight';
import { installServiceProxy } from './services/service-proxy';

export interface RunningGateway {
  app: NestFastifyApplication;
  url: string;
  /** The coreweave.sandbox.v1 gRPC/Connect server (the SDKs' CWSANDBOX_BASE_URL). */
  grpc: RunningGrpcServer;
  config: GatewayConfig;
  db: Kysely<GatewayDatabase>;
  nc: NatsConnection;
  registry: RunnerRegistry;
  /** Owning runners of live sandboxes (exec and file calls skip the database while cached). */
  routes: SandboxRouteCache;
  /** Armed wake-ups of `:wait` long polls. */
  waiters: SandboxStateWaiters;
  reconciler: Reconciler;
  metrics: GatewayMetrics;
  openapi: OpenAPIObject;
  log: ServiceLogger;
  close(): Promise<void>;
}

/** The gateway's level words (Nest's, kept for existing configurations) in the logger's terms. */
const LOG_LEVELS: Record<GatewayConfig['logLevel'], LogLevel> = { silent: 'silent', error: 'error', warn: 'warn', log: 'info', debug: 'debug' };

export function gatewayLogger(config: GatewayConfig): ServiceLogger {
  return createServiceLogger({ service: 'gateway', level: LOG_LEVELS[config.logLevel] });
}

export function buildOpenApi(app: NestFastifyApplication): OpenAPIObject {
  const cfg = new DocumentBuilder()
    .setTitle('Paddock gateway (sandbox data plane)')
    .setVersion('0.0.0')
    .setDescription('REST surface of the sandbox data plane; the WebSocket exec stream is documented in the README.')
    .addBearerAuth()
    .build();
  return SwaggerModule.createDocument(app, cfg);
}

/**
 * Composition root: migrates its own tables, connects NATS, wires the services, starts the
 * heartbeat listener, the state-event consumer and the reconciler, and listens.
 */
export async function createGateway(config: GatewayConfig, opts: { migrate?: boolean; log?: ServiceLogger } = {}): Promise<RunningGateway> {
  const logger = opts.log ?? gatewayLogger(config);
  const log = (e: unknown): void => logger.error(e instanceof Error ? e.message : String(e));
  const db = createGatewayDb(config.databaseUrl, 20);
  if (opts.migrate !== false) await migrateGatewayToLatest(db);
  const nc = await connectNats({
    servers: config.natsUrl,
    credsFile: config.natsCredsFile,
    name: 'paddock-gateway',
    maxReconnectAttempts: -1,
    reconnectTimeWait: 200,
    // The gateway must come back on its own after a NATS outage.
    waitOnFirstConnect: true,
    // No Error (stack capture) made up front for every request/reply; the errors a failed call
    // becomes (RunnerTransportError) carry what the caller needs, a NATS-side stack adds nothing.
    noAsyncTraces: true,
    // Nothing the gateway publishes is for itself: its row-change hints (SandboxChangeBroadcast)
    // came back to it on every state write only to be dropped by origin.
    noEcho: true,
  });
  const metrics = new GatewayMetrics(true);
  const registry = new RunnerRegistry();
  const runners = new RunnerClient(nc, config.rpcTimeoutMs, (runnerId) => registry.mayBeAlive(runnerId));
  const routes = new SandboxRouteCache(config.sandboxCacheMs);
  // Known once the server listens, unless configured.
  let serviceUrlBase = config.serviceUrlBase ?? '';
  const waiters = new SandboxStateWaiters();
  metrics.watch({ longPolls: () => waiters.size, routeCacheEntries: () => routes.size });
  // State writes wake long polls here and, through NATS, on every other gateway.
  const changes = new SandboxChangeBroadcast(nc, waiters);
  const repo = new SandboxRepository(db, routes, changes);
  const policies = new PolicySource(db);
  const placement = new PlacementService(registry, policies);
  const secrets = new SecretResolver(nc, config.rpcTimeoutMs);
  // Shared: the consumer holds the events of creates in flight for the lifecycle to settle.
  const creates = new CreatesInFlight();
  const lifecycle = new SandboxLifecycleService(
    repo,
    placement,
    runners,
    metrics,
    undefined,
    undefined,
    { waiters, recheckMs: config.waitRecheckMs },
    new SourceGate(registry, policies),
    () => serviceUrlBase,
    secrets,
    creates,
  );
  const events = new StateEventsConsumer(nc, repo, metrics, log, creates);
  const ops = new SandboxOpsService(
    lifecycle,
    runners,
    config.rpcTimeoutMs,
    routes,
    (runnerId) => registry.isFresh(runnerId),
    (runnerId, sandboxId) => registry.get(runnerId)?.heartbeat.sandboxUsage?.[sandboxId],
  );
  const snapshots = new SnapshotsService(new SnapshotRepository(db), lifecycle, runners, (organizationId) =>
    registry
      .freshRunners()
      .filter((r) => r.heartbeat.organizationId === organizationId)
      .map((r) => r.heartbeat.runnerId),
  );
  const auth = new TokenAuthenticator(db, config.authCacheMs);
  const heartbeats = new HeartbeatListener(nc, registry, log);
  const reconciler = new Reconciler(
    repo,
    runners,
    registry,
    metrics,
    { intervalMs: config.reconcileIntervalMs, stuckAfterMs: config.stuckAfterMs, runnerLostGraceMs: config.runnerLostGraceMs },
    log,
    undefined,
    secrets,
  );
  const health: HealthProbe = {
    async ready() {
      const checks: Record<string, string> = {};
      try {
        await sql`SELECT 1`.execute(db);
        checks.database = 'ok';
      } catch (e) {
        checks.database = e instanceof Error ? e.message : 'error';
      }
      checks.nats = nc.isClosed() ? 'closed' : 'ok';
      return { ok: Object.values(checks).every((c) => c === 'ok'), checks };
    },
  };

  // request.ip is the forwarded client only behind a proxy we were told to trust.
  const adapter = new FastifyAdapter({ bodyLimit: config.bodyLimitBytes, trustProxy: config.trustProxy, genReqId: requestIdFor, logger: false });
  const app = await NestFactory.create<NestFastifyApplication>(
    GatewayModule.register([
      { provide: LIFECYCLE, useValue: lifecycle },
      { provide: OPS, useValue: ops },
      { provide: AUTH, useValue: auth },
      { provide: HEALTH, useValue: health },
      { provide: METRICS, useValue: metrics },
      { provide: SNAPSHOTS, useValue: snapshots },
    ]),
    adapter,
    // Body parsers are ours (below): Nest's would refuse an empty JSON body.
    { logger: config.logLevel === 'silent' ? false : nestLoggerFor(logger), bodyParser: false },
  );
  const fastify = app.getHttpAdapter().getInstance();
  // Every request runs as its request id: the lines logged and the runner requests sent while
  // serving it carry the id, which the response returns (a client's own x-request-id is kept).
  fastify.addHook('onRequest', (req, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, req.id);
    withRequestId(req.id, done);
  });
  // An empty JSON body (DELETE with a content-type header, curl -H ...) is "no body", not an error.
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: config.bodyLimitBytes }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body));
    } catch (e) {
      done(e as Error, undefined); // parseJsonBody throws PaddockErrors only
    }
  });
  fastify.addContentTypeParser('application/octet-stream', { parseAs: 'buffer', bodyLimit: config.bodyLimitBytes }, (_req, body, done) =>
    done(null, body),
  );
  fastify.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched';
    metrics.httpDuration.observe({ method: req.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
    // Named explicitly: the response may finish outside the request's async context.
    logger.info('request', { requestId: req.id, method: req.method, route, url: req.url, status: reply.statusCode, durationMs: Math.round(reply.elapsedTime * 10) / 10 });
    done();
  });
  installConsoleCors(fastify, config.consoleOrigins);
  registerUnaryExecFastPath(fastify, auth, ops);
  registerCreateFastPath(fastify, auth, lifecycle, snapshots);
  const sandboxService = sandboxServiceHandler({ auth, lifecycle, ops }, config.bodyLimitBytes);
  serveConnectOnRestPort(fastify, sandboxService);
  await app.register(websocket, { options: { handleProtocols: selectExecProtocol } });
  registerExecWebSocket(fastify, auth, ops);
  const openapi = buildOpenApi(app);
  fastify.get('/openapi.json', (_req, reply) => reply.send(openapi));
  app.enableShutdownHooks();

  heartbeats.start();
  changes.start();
  events.start();
  await app.listen(config.port, config.host);
  const grpc = await startGrpcServer(sandboxService, {
    port: config.grpcPort,
    host: config.host,
    ...(config.grpcTls ? { tlsCertFile: config.grpcTls.certFile, tlsKeyFile: config.grpcTls.keyFile } : {}),
  }).catch(async (e: unknown) => {
    await app.close();
    throw e;
  });
  reconciler.start();
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  serviceUrlBase ||= `http://127.0.0.1:${port}`;
  // After listen: every plugin's request and upgrade listener is in place to be put behind it.
  installServiceProxy(app.getHttpServer(), { findSandbox: (id) => repo.findAnyById(id), runners, auth, onError: (e) => log(e) });

  let closed = false;
  return {
    app,
    url: `http://127.0.0.1:${port}`,
    grpc,
    config,
    db,
    nc,
    registry,
    routes,
    waiters,
    reconciler,
    metrics,
    openapi,
    log: logger,
    async close() {
      if (closed) return;
      closed = true;
      await reconciler.stop();
      await grpc.close();
      heartbeats.stop();
      changes.stop();
      await app.close();
      await events.stop();
      await nc.drain().catch(() => undefined);
      await db.destroy();
    },
  };
}

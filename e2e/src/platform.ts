import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  REPO_ROOT,
  buildPackages,
  controllerNatsEnv,
  credsSecrets,
  freePort,
  httpJson,
  provisionControllerRole,
  provisionGatewayRole,
  removeStateDir,
  startAppProcess,
  startControlPlaneProcess,
  startNats,
  startPostgres,
  waitFor,
  type AppProcess,
  type ThrowawayNats,
  type ThrowawayPostgres,
} from '@paddock/testing';

export const ENTRIES = {
  controlPlane: join(REPO_ROOT, 'apps', 'control-plane', 'dist', 'main.js'),
  gateway: join(REPO_ROOT, 'apps', 'gateway', 'dist', 'main.js'),
  controller: join(REPO_ROOT, 'apps', 'controller', 'dist', 'main.js'),
  runner: join(REPO_ROOT, 'apps', 'runner', 'dist', 'main.js'),
  cli: join(REPO_ROOT, 'apps', 'cli', 'dist', 'cli.js'),
};

export function buildAll(): void {
  buildPackages(['@paddock/control-plane', '@paddock/gateway', '@paddock/controller', '@paddock/runner', '@paddock/cli'], Object.values(ENTRIES));
}

/** A controller process (local driver) for one "cluster" of this machine. */
export interface ControllerProcess {
  clusterName: string;
  child: ChildProcess;
  stateDir: string;
  stop(): Promise<void>;
}

/**
 * The whole platform as separate processes, each of which a test can stop and restart (the
 * outage journeys), on throwaway Postgres and NATS. `pnpm start` runs exactly these processes;
 * `start-command.e2e.spec.ts` checks that command itself.
 */
export interface Platform {
  pg: ThrowawayPostgres;
  nats: ThrowawayNats;
  /** The database as its administrator (the control plane connects so; the others have roles). */
  databaseUrl: string;
  token: string;
  cp: AppProcess & { token: string };
  gw: AppProcess;
  controllers: ControllerProcess[];
  workDir: string;
  shellEnv: NodeJS.ProcessEnv;
  cpApi<T = unknown>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }>;
  gwApi<T = unknown>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }>;
  startController(clusterName: string, zone: string, declareRunner?: string): Promise<ControllerProcess>;
  restartControlPlane(): Promise<void>;
  restartGateway(): Promise<void>;
  stop(): Promise<void>;
}

export async function startPlatform(): Promise<Platform> {
  buildAll();
  const pg = await startPostgres();
  const nats = await startNats();
  const databaseUrl = pg.urlFor('paddock');
  await pg.createDatabase('paddock');
  const cpPort = await freePort();
  const gwPort = await freePort();
  // As `pnpm start` wires them: the control plane serves the web console, which calls the gateway.
  const cpEnv = { PADDOCK_TOKEN_CACHE_TTL_MS: '0', PADDOCK_CONSOLE_GATEWAY_URL: `http://127.0.0.1:${gwPort}` };
  let cp = await startControlPlaneProcess({ databaseUrl, nats, port: cpPort, env: cpEnv });
  const token = cp.token;
  // The gateway and each controller connect with their own database roles, as in production.
  const organizationId = (await httpJson<{ organization: { id: string } }>(cp.url, 'GET', '/v1/auth/whoami', token)).json.organization.id;
  const gwEnv = { DATABASE_URL: await provisionGatewayRole(databaseUrl), ...(await nats.env('gateway')), GATEWAY_GRPC_PORT: '0', PADDOCK_TOKEN_CACHE_TTL_MS: '0', LOG_LEVEL: 'warn', GATEWAY_CONSOLE_ORIGINS: cp.url };
  let gw = await startAppProcess({ entry: ENTRIES.gateway, portVar: 'GATEWAY_PORT', port: gwPort, env: gwEnv });
  const workDir = mkdtempSync(join(tmpdir(), 'paddock-e2e-'));
  // mkdtemp makes 0700 directories; sandboxes run as an unprivileged user inside bubblewrap and
  // must be able to traverse the runner's state directory (the README's `.paddock` is 0755).
  chmodSync(workDir, 0o755);
  const bin = join(workDir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'cwic'), `#!/bin/sh\nexec "${process.execPath}" "${ENTRIES.cli}" "$@"\n`);
  chmodSync(join(bin, 'cwic'), 0o755);
  const controllers: ControllerProcess[] = [];
  const platform: Platform = {
    pg,
    nats,
    databaseUrl,
    token,
    get cp() {
      return cp;
    },
    get gw() {
      return gw;
    },
    controllers,
    workDir,
    shellEnv: {
      PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      HOME: workDir,
      XDG_CONFIG_HOME: join(workDir, 'config'),
      TOKEN: token,
      LANG: 'C.UTF-8',
    },
    cpApi: (method, path, body) => httpJson(cp.url, method, path, token, body),
    gwApi: (method, path, body) => httpJson(gw.url, method, path, token, body),
    async startController(clusterName, zone, declareRunner) {
      const stateDir = join(workDir, `controller-${clusterName}`);
      // As an admin sets a cluster up: register it, issue its controller's NATS user and its database role.
      const { env: natsEnv } = await controllerNatsEnv({ url: cp.url, token }, nats, { name: clusterName, zone }, join(workDir, 'controller-creds'));
      const controllerDatabaseUrl = await provisionControllerRole(databaseUrl, clusterName, organizationId);
      const child = spawn(process.execPath, [ENTRIES.controller], {
        env: {
          ...process.env,
          DATABASE_URL: controllerDatabaseUrl,
          ...natsEnv,
          PADDOCK_CONTROL_PLANE_URL: cp.url,
          PADDOCK_API_KEY: token,
          PADDOCK_CONTROLLER_DRIVER: 'local',
          PADDOCK_CLUSTER_NAME: clusterName,
          PADDOCK_ZONE: zone,
          PADDOCK_CONTROLLER_STATE_DIR: stateDir,
          PADDOCK_RUNNER_ENTRY: ENTRIES.runner,
          PADDOCK_RESYNC_MS: '1000',
          // Runner processes inherit this (a runner host setting the local driver passes on):
          // capacity is a placement hint (cgroups enforce each sandbox's quota), and the journeys
          // ask for more CPUs than this 2-core machine has.
          PADDOCK_CAPACITY_CPU_MILLIS: '64000',
          ...(declareRunner ? { PADDOCK_DECLARE_DEFAULT_RUNNER: declareRunner } : {}),
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      await waitFor(async () => {
        if (child.exitCode !== null) throw new Error(`controller ${clusterName} exited ${child.exitCode}`);
        const r = await httpJson<{ clusters: { name: string }[] }>(cp.url, 'GET', '/v1/clusters', token);
        return r.json?.clusters?.some((c) => c.name === clusterName);
      }, { timeoutMs: 60_000, what: `controller ${clusterName} registered` });
      const c: ControllerProcess = {
        clusterName,
        child,
        stateDir,
        async stop() {
          if (child.exitCode === null && child.signalCode === null) {
            child.kill('SIGTERM');
            await waitFor(() => child.exitCode !== null || child.signalCode !== null, { timeoutMs: 15_000, what: 'controller exit' }).catch(() => child.kill('SIGKILL'));
          }
        },
      };
      controllers.push(c);
      return c;
    },
    async restartControlPlane() {
      cp = await startControlPlaneProcess({ databaseUrl, nats, token, port: cpPort, env: cpEnv });
    },
    async restartGateway() {
      gw = await startAppProcess({ entry: ENTRIES.gateway, portVar: 'GATEWAY_PORT', port: gwPort, env: gwEnv });
    },
    async stop() {
      for (const c of controllers) await c.stop();
      await gw.stop();
      await cp.stop();
      // Runner processes are detached children of the controllers (they outlive a controller
      // restart by design) and name their state directory under the work dir in their
      // environment; sandboxes still tearing down hold mounts under it. removeStateDir stops
      // them all, detaches the mounts, then deletes it.
      await removeStateDir(workDir);
      await nats.stop();
      pg.stop();
    },
  };
  return platform;
}

export interface ShellResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A command line run through /bin/sh exactly as a user would type it. */
export function sh(p: Platform, script: string): ShellResult {
  const r = spawnSync('/bin/sh', ['-c', script], { cwd: p.workDir, env: p.shellEnv, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** The platform as `pnpm start` runs it on one machine: a local controller declaring the default runner `local`, READY and CONNECTED. */
export async function startPlatformWithLocalRunner(): Promise<Platform> {
  const p = await startPlatform();
  await p.startController('local', 'local', 'local');
  await waitFor(
    async () => {
      const r = await p.cpApi<{ installStatus: string; connectionStatus: string }>('GET', '/v1/sandbox/managedRunners/local');
      return r.json.installStatus === 'RUNNER_INSTALL_STATUS_READY' && r.json.connectionStatus === 'RUNNER_CONNECTION_STATUS_CONNECTED';
    },
    { timeoutMs: 120_000, what: 'the local runner READY and CONNECTED' },
  );
  return p;
}

/**
 * What no sandbox may read, by name: the admin token, the database URL (and its password), the
 * NATS server, and the JWT and seed of every NATS user the platform issued on this machine (each
 * runner's and each controller's), with the paths of those credentials files.
 */
export function platformSecrets(p: Platform): { needles: Record<string, string>; credsFiles: string[] } {
  const credsFiles = [
    ...p.controllers.flatMap((c) => {
      const runners = join(c.stateDir, 'runners');
      return existsSync(runners) ? readdirSync(runners).map((r) => join(runners, r, 'nats.creds')).filter((f) => existsSync(f)) : [];
    }),
    ...readdirSync(join(p.workDir, 'controller-creds')).map((f) => join(p.workDir, 'controller-creds', f)),
  ];
  const dbPassword = decodeURIComponent(new URL(p.databaseUrl).password);
  const needles: Record<string, string> = {
    'admin token': p.token,
    DATABASE_URL: p.databaseUrl,
    ...(dbPassword ? { 'database password': dbPassword } : {}),
    NATS_URL: p.nats.url,
  };
  for (const f of credsFiles) {
    const { jwt, seed } = credsSecrets(readFileSync(f, 'utf8'));
    needles[`${f} JWT`] = jwt;
    needles[`${f} seed`] = seed;
  }
  return { needles, credsFiles };
}

import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, freePort, processesUsing, removeStateDir, startPostgres, waitFor, type ThrowawayPostgres } from '@paddock/testing';
import { buildAll } from './platform';

/**
 * `pnpm start` as a newcomer runs it, on a throwaway Postgres, private ports and a state
 * directory of its own (the checkout's `.paddock`): its own nats-server with authentication.
 */
export interface StartSetup {
  pg: ThrowawayPostgres;
  natsPort: number;
  stateDir: string;
  /** The environment `pnpm start` (and the commands it prints) run with. */
  env: NodeJS.ProcessEnv;
  cpUrl: string;
  gwUrl: string;
  /** Whatever a failed test left behind: processes that name the state dir, and mounts under it. */
  cleanup(): Promise<void>;
}

export async function prepareStart(database: string): Promise<StartSetup> {
  buildAll();
  const pg = await startPostgres();
  const natsPort = await freePort();
  const stateDir = mkdtempSync(join(tmpdir(), 'paddock-start-'));
  // As `.paddock` in a checkout: traversable by the unprivileged sandbox user (mkdtemp gives 0700).
  chmodSync(stateDir, 0o755);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // The database does not exist yet: `pnpm start` creates it.
    DATABASE_URL: pg.urlFor(database),
    PADDOCK_NATS_PORT: String(natsPort),
    CONTROL_PLANE_PORT: String(await freePort()),
    GATEWAY_PORT: String(await freePort()),
    GATEWAY_GRPC_PORT: String(await freePort()),
    PADDOCK_STATE_DIR: stateDir,
    XDG_CONFIG_HOME: join(stateDir, 'xdg'),
  };
  // No NATS_URL: `pnpm start` runs its own server, with authentication.
  delete env.NATS_URL;
  return {
    pg,
    natsPort,
    stateDir,
    env,
    cpUrl: `http://127.0.0.1:${env.CONTROL_PLANE_PORT}`,
    gwUrl: `http://127.0.0.1:${env.GATEWAY_PORT}`,
    async cleanup() {
      await removeStateDir(stateDir);
      pg.stop();
    },
  };
}

export interface StartedPaddock {
  child: ChildProcess;
  /** Everything it printed so far. */
  output(): string;
  /** Ctrl-C, as a terminal sends it; resolves with how long everything took to stop. */
  stop(): Promise<number>;
}

/**
 * Runs `pnpm start` until "Paddock is ready.". `terminal`: in a pseudo-terminal (util-linux
 * `script`), as a person at a terminal runs it, Ctrl-C being the byte the terminal turns into SIGINT.
 */
export async function startPaddock(setup: StartSetup, opts: { terminal?: boolean } = {}): Promise<StartedPaddock> {
  // Its own process group, so a pipe-run stop can signal the group the way Ctrl-C in a terminal does.
  const child = opts.terminal
    ? spawn('script', ['-qefc', 'pnpm start', '/dev/null'], { cwd: REPO_ROOT, env: setup.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true })
    : spawn('pnpm', ['start'], { cwd: REPO_ROOT, env: setup.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  await waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`pnpm start exited ${child.exitCode}:\n${out}`);
      return out.includes('Paddock is ready.');
    },
    { timeoutMs: 240_000, intervalMs: 200, what: 'pnpm start ready' },
  );
  return {
    child,
    output: () => out,
    async stop() {
      const t0 = Date.now();
      if (opts.terminal) child.stdin?.write('\x03');
      else if (child.pid) process.kill(-child.pid, 'SIGINT');
      await waitFor(() => child.exitCode !== null || child.signalCode !== null, { timeoutMs: 30_000, what: 'pnpm start exit' });
      // Every process it started names the state directory (command line or environment): services,
      // the runner the controller deployed, supervisors and sandboxes.
      await waitFor(() => processesUsing(setup.stateDir).length === 0, {
        timeoutMs: 30_000,
        what: `no process left (${processesUsing(setup.stateDir).join('; ')})`,
      });
      return Date.now() - t0;
    },
  };
}

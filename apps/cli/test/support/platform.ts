import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort, startNats, startPostgres, waitFor, type ThrowawayNats, type ThrowawayPostgres } from '@paddock/testing';

export const REPO = resolve(__dirname, '..', '..', '..', '..');
export const CLI_ENTRY = join(REPO, 'apps', 'cli', 'dist', 'cli.js');
const CP_ENTRY = join(REPO, 'apps', 'control-plane', 'dist', 'main.js');

/** Builds what the black-box tests execute, unless turbo already did (CI runs build first). */
export function ensureBuilt(): void {
  if (existsSync(CLI_ENTRY) && existsSync(CP_ENTRY) && process.env.CI) return;
  // The control plane's dependency closure covers the CLI's runtime imports (contracts, policy).
  const r = spawnSync('pnpm', ['exec', 'turbo', 'run', 'build', '--filter=@paddock/control-plane...', '--output-logs=errors-only'], {
    cwd: REPO,
    stdio: 'inherit',
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' },
  });
  if (r.status !== 0) throw new Error('build failed');
  const cli = spawnSync('pnpm', ['exec', 'tsc', '-p', 'tsconfig.build.json'], { cwd: join(REPO, 'apps', 'cli'), stdio: 'inherit' });
  if (cli.status !== 0) throw new Error('cli build failed');
}

export interface Platform {
  cpUrl: string;
  token: string;
  pg: ThrowawayPostgres;
  nats: ThrowawayNats;
  /** A shell environment where `cwic` is on PATH and credentials live in a private XDG dir. */
  shellEnv: NodeJS.ProcessEnv;
  workDir: string;
  api<T = unknown>(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; json: T }>;
  stop(): Promise<void>;
}

/** Real Postgres, real NATS and the compiled control plane as a child process, as users run it. */
export async function startPlatform(): Promise<Platform> {
  ensureBuilt();
  const pg = await startPostgres();
  const nats = await startNats();
  const dbUrl = await pg.createDatabase('paddock');
  const port = await freePort();
  const token = `pdk_${Buffer.from(`cli-test-${Date.now()}-${Math.random()}`).toString('base64url')}`;
  const cp: ChildProcess = spawn(process.execPath, [CP_ENTRY], {
    env: { ...process.env, DATABASE_URL: dbUrl, NATS_URL: nats.url, CONTROL_PLANE_PORT: String(port), HOST: '127.0.0.1', PADDOCK_BOOTSTRAP_TOKEN: token, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  cp.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const cpUrl = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => {
      if (cp.exitCode !== null) throw new Error(`control plane exited ${cp.exitCode}: ${stderr}`);
      const r = await fetch(`${cpUrl}/readyz`).catch(() => undefined);
      return r?.ok;
    },
    { timeoutMs: 90_000, what: 'control plane /readyz' },
  );
  const workDir = mkdtempSync(join(tmpdir(), 'cwic-e2e-'));
  const bin = join(workDir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'cwic'), `#!/bin/sh\nexec "${process.execPath}" "${CLI_ENTRY}" "$@"\n`);
  chmodSync(join(bin, 'cwic'), 0o755);
  const shellEnv: NodeJS.ProcessEnv = {
    PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: workDir,
    XDG_CONFIG_HOME: join(workDir, 'config'),
    TOKEN: token,
    LANG: 'C.UTF-8',
  };
  const api = async <T>(method: string, path: string, body?: unknown, tok = token): Promise<{ status: number; json: T }> => {
    const r = await fetch(`${cpUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${tok}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, json: (text ? JSON.parse(text) : undefined) as T };
  };
  return {
    cpUrl,
    token,
    pg,
    nats,
    shellEnv,
    workDir,
    api,
    async stop() {
      cp.kill('SIGTERM');
      await waitFor(() => cp.exitCode !== null || cp.signalCode !== null, { timeoutMs: 10_000, what: 'control plane exit' }).catch(() => cp.kill('SIGKILL'));
      await nats.stop();
      pg.stop();
    },
  };
}

export interface ShellResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command line through /bin/sh exactly as a user would type it (pipes, $(...), jq). */
export function sh(p: Platform, script: string, cwd = p.workDir): ShellResult {
  const r = spawnSync('/bin/sh', ['-c', script], { cwd, env: p.shellEnv, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

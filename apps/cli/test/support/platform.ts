import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  REPO_ROOT,
  httpJson,
  startControlPlaneProcess,
  startNats,
  startPostgres,
  type AppProcess,
  type ThrowawayNats,
  type ThrowawayPostgres,
} from '@paddock/testing';

export const CLI_ENTRY = join(REPO_ROOT, 'apps', 'cli', 'dist', 'cli.js');

export interface Platform {
  cpUrl: string;
  databaseUrl: string;
  token: string;
  pg: ThrowawayPostgres;
  nats: ThrowawayNats;
  cp: AppProcess;
  /** A shell environment where `cwic` is on PATH and credentials live in a private XDG dir. */
  shellEnv: NodeJS.ProcessEnv;
  workDir: string;
  api<T = unknown>(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; json: T }>;
  stop(): Promise<void>;
}

/** Real Postgres, real NATS and the compiled control plane as a child process, as users run it. */
export async function startPlatform(): Promise<Platform> {
  // The compiled apps are built once per run by test/support/global-build.ts (vitest globalSetup).
  const pg = await startPostgres();
  const nats = await startNats();
  const databaseUrl = await pg.createDatabase('paddock');
  const cp = await startControlPlaneProcess({ databaseUrl, nats, env: { PADDOCK_SECRETS_KEY: randomBytes(32).toString('base64') } });
  const workDir = mkdtempSync(join(tmpdir(), 'cwic-e2e-'));
  const bin = join(workDir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'cwic'), `#!/bin/sh\nexec "${process.execPath}" "${CLI_ENTRY}" "$@"\n`);
  chmodSync(join(bin, 'cwic'), 0o755);
  const shellEnv: NodeJS.ProcessEnv = {
    PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: workDir,
    XDG_CONFIG_HOME: join(workDir, 'config'),
    TOKEN: cp.token,
    LANG: 'C.UTF-8',
  };
  return {
    cpUrl: cp.url,
    databaseUrl,
    token: cp.token,
    pg,
    nats,
    cp,
    shellEnv,
    workDir,
    api: <T>(method: string, path: string, body?: unknown, token = cp.token) => httpJson<T>(cp.url, method, path, token, body),
    async stop() {
      await cp.stop();
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

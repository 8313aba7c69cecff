import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { removeStateDir } from '@paddock/testing';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const REPO = resolve(__dirname, '..', '..', '..', '..');
/** apps/runner: started as a process only (apps never import apps), as its own tests do. */
const RUNNER_APP = join(REPO, 'apps', 'runner');

/**
 * A minimal environment: the test process's own (vitest/vite set NODE_ENV, MODE, TEST, SSR...)
 * would leak into the runner and change how it behaves.
 */
function runnerBaseEnv(): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'LANG', 'TMPDIR', 'USER'];
  return Object.fromEntries(keep.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]]));
}

export interface RunnerSpec {
  runnerId: string;
  organizationId: string;
  /** `NATS_URL` and `NATS_CREDS` of this runner. */
  nats: Record<string, string>;
  policy?: unknown;
  policyEtag?: string;
  /** The config file's `warmPools` (the runner keeps that many sandboxes idle per template). */
  warmPools?: unknown[];
  heartbeatMs?: number;
  capacitySandboxes?: number;
  /** Reuse a previous process's directory (config + state), as a restarted runner would. */
  dir?: string;
  /** Extra runner settings (e.g. PADDOCK_IMAGE_ALIASES). */
  env?: Record<string, string>;
}

export interface RunnerProcess {
  readonly runnerId: string;
  readonly stateDir: string;
  readonly dir: string;
  readonly child: ChildProcess;
  output(): string;
  /** SIGKILL, as a crash. */
  kill(): Promise<void>;
  /** SIGTERM; the directory (and the state of sandboxes that outlive the runner) goes too unless kept. */
  stop(opts?: { keepState?: boolean }): Promise<void>;
}

export function startRunner(spec: RunnerSpec): RunnerProcess {
  const dir = spec.dir ?? mkdtempSync(join(tmpdir(), `paddock-runner-${spec.runnerId}-`));
  // Sandboxes run as an unprivileged user inside bwrap: they must be able to traverse the state dir.
  chmodSync(dir, 0o755);
  const configPath = join(dir, 'config.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      runnerId: spec.runnerId,
      revision: 1,
      ...(spec.policy !== undefined ? { policy: spec.policy, policyEtag: spec.policyEtag ?? `etag-${spec.runnerId}` } : {}),
      ...(spec.warmPools ? { warmPools: spec.warmPools } : {}),
    }),
  );
  const stateDir = join(dir, 'state');
  // The runner's Nest module injects by explicit tokens, so it runs from source under tsx.
  // PADDOCK_BENCH_RUNNER_CPU_PROF=<dir>: the runner writes a V8 CPU profile there as it exits (NODE_OPTIONS refuses --cpu-prof).
  const profDir = process.env.PADDOCK_BENCH_RUNNER_CPU_PROF;
  const prof = profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [];
  const child = spawn(process.execPath, [...prof, '--conditions=@paddock/source', '--import', 'tsx', 'src/main.ts'], {
    cwd: RUNNER_APP,
    env: {
      ...runnerBaseEnv(),
      PADDOCK_RUNNER_ID: spec.runnerId,
      PADDOCK_ORGANIZATION_ID: spec.organizationId,
      PADDOCK_CLUSTER_ID: `cluster-${spec.runnerId}`,
      PADDOCK_ZONE: 'local-1',
      ...spec.nats,
      PADDOCK_RUNNER_CONFIG: configPath,
      PADDOCK_RUNNER_STATE_DIR: stateDir,
      PADDOCK_HEARTBEAT_INTERVAL_MS: String(spec.heartbeatMs ?? 2000),
      PADDOCK_CAPACITY_SANDBOXES: String(spec.capacitySandboxes ?? 400),
      // Capacity well above the host's, so placement tests exercise policies, not this machine's 2 cores.
      PADDOCK_CAPACITY_CPU_MILLIS: '256000',
      PADDOCK_CAPACITY_MEMORY_BYTES: String(256 * 1024 ** 3),
      ...spec.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4_000_000)));
  child.stderr?.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4_000_000)));
  const onExit = (): void => void child.kill('SIGKILL');
  process.once('exit', onExit);
  const waitExit = (signal: NodeJS.Signals): Promise<void> =>
    new Promise((res) => {
      if (child.exitCode !== null || child.signalCode !== null) return res();
      child.once('exit', () => res());
      child.kill(signal);
    });
  return {
    runnerId: spec.runnerId,
    stateDir,
    dir,
    child,
    output: () => out,
    kill: () => waitExit('SIGKILL'),
    async stop(opts = {}) {
      await waitExit('SIGTERM');
      process.removeListener('exit', onExit);
      if (opts.keepState) return;
      // A sandbox that outlived its runner may still hold a mount under the directory.
      await removeStateDir(dir);
    },
  };
}

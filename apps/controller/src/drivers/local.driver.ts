import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, closeSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runnerInheritedEnv, type RunnerConfigFileInput } from '@paddock/contracts';
import { writeSecretFile } from '@paddock/nats';
import { runnerConfigOf, type DesiredRunner } from '../desired';
import type { RunnerCredentialSource } from '../runner-credentials';
import type { Diagnosis } from '../reconcile/diagnosis';
import type { ClusterDriver } from './driver';

/** Last heartbeat seen per runner id (fed by the controller's NATS subscription). */
export interface HeartbeatView {
  last(runnerId: string): { revision: number; health: string; receivedAt: number; intervalMs: number } | undefined;
}

export interface LocalDriverOptions {
  /** Where runner config files, pid files and logs live (one folder per runner). */
  stateDir: string;
  /** The runner's compiled entry point (`apps/runner/dist/main.js`). */
  runnerEntry: string;
  natsUrl: string;
  /** Issues each runner's NATS user; without it runners connect with no credentials. */
  credentials?: RunnerCredentialSource;
  heartbeats: HeartbeatView;
  /** Extra environment for runner processes (on top of what they inherit, see `runnerEnv`). */
  env?: Record<string, string>;
  now?: () => number;
}

interface ProcessRecord {
  pid: number;
  revision: number;
  uid: string;
  startedAt: number;
  /** Start times of recent launches, to recognise a crash loop. */
  launches: number[];
}

const CRASH_WINDOW_MS = 60_000;
const CRASH_LAUNCHES = 4;
/** Three default heartbeat intervals: how long a new controller waits to hear an adopted runner. */
const FIRST_HEARTBEAT_GRACE_MS = 15_000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A recycled pid must not be mistaken for our runner: check it is still a node running the entry.
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('main.js');
  } catch {
    return false;
  }
}

/**
 * The embedded default "cluster": this machine. Each runner is a detached child process (it
 * outlives a controller restart and is adopted through its pid file), started with a config file
 * the runner watches; a new target revision restarts it, a policy edit only rewrites the file.
 */
export class LocalDriver implements ClusterDriver {
  readonly kind = 'local' as const;

  private readonly startedAt: number;

  constructor(private readonly opts: LocalDriverOptions) {
    mkdirSync(join(opts.stateDir, 'runners'), { recursive: true });
    this.startedAt = this.now();
  }

  private dir(runnerId: string): string {
    return join(this.opts.stateDir, 'runners', runnerId);
  }

  private readRecord(runnerId: string): ProcessRecord | undefined {
    const f = join(this.dir(runnerId), 'process.json');
    if (!existsSync(f)) return undefined;
    try {
      return JSON.parse(readFileSync(f, 'utf8')) as ProcessRecord;
    } catch {
      return undefined;
    }
  }

  private writeAtomic(file: string, content: string): void {
    const tmp = `${file}.tmp-${process.pid}`;
    writeFileSync(tmp, content, { mode: 0o600 });
    renameSync(tmp, file);
  }

  private now(): number {
    return this.opts.now?.() ?? Date.now();
  }

  /**
   * The runner's `.creds` file (0600, in its folder, outside every sandbox's view), rewritten when
   * the credentials are renewed; the runner re-reads it at its next reconnect, which the old
   * user's expiry forces. Returns its path, or undefined when runners get no credentials.
   */
  private async ensureCreds(runnerId: string): Promise<string | undefined> {
    if (!this.opts.credentials) return undefined;
    const file = join(this.dir(runnerId), 'nats.creds');
    const current = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    const creds = await this.opts.credentials.credsFor(runnerId, current);
    if (creds !== current) writeSecretFile(file, creds);
    return file;
  }

  /**
   * A runner's whole environment, built here and nowhere else: the machine's basics and the runner
   * host settings (an allow-list, never the controller's own environment, which holds its API
   * token and database URL), where its config file and state are, and `extra`. Its identity, NATS
   * server and credentials file are in the config file (0600), not here: a process's environment
   * is what its children inherit.
   */
  private runnerEnv(runnerId: string, extra: Record<string, string>): Record<string, string> {
    const dir = this.dir(runnerId);
    return {
      ...runnerInheritedEnv(process.env),
      ...this.opts.env,
      PADDOCK_RUNNER_BACKEND: 'local',
      PADDOCK_RUNNER_CONFIG: join(dir, 'config.json'),
      PADDOCK_RUNNER_STATE_DIR: join(dir, 'state'),
      ...extra,
    };
  }

  /** Writes the runner's config file (0600, replaced atomically, only on change: the runner watches it). */
  private writeConfig(d: DesiredRunner, credsFile: string | undefined): void {
    const file: RunnerConfigFileInput = {
      ...runnerConfigOf(d),
      // Literal keys, not a spread: a key the contract renames fails this typecheck.
      nats: credsFile ? { url: this.opts.natsUrl, credsFile } : { url: this.opts.natsUrl },
    };
    const configFile = join(this.dir(d.runnerId), 'config.json');
    const config = `${JSON.stringify(file, null, 2)}\n`;
    if (!existsSync(configFile) || readFileSync(configFile, 'utf8') !== config) this.writeAtomic(configFile, config);
  }

  async apply(d: DesiredRunner): Promise<void> {
    const dir = this.dir(d.runnerId);
    // 0711: bwrap runs as the sandbox user and must traverse to the sandboxes under state/; the
    // credentials and config files in here are 0600.
    mkdirSync(dir, { recursive: true, mode: 0o711 });
    this.writeConfig(d, await this.ensureCreds(d.runnerId));
    const rec = this.readRecord(d.runnerId);
    if (rec && alive(rec.pid)) {
      if (rec.revision === d.targetRevision && rec.uid === d.uid) return;
      await this.stopProcess(rec.pid);
    }
    const launches = (rec?.launches ?? []).filter((t) => this.now() - t < CRASH_WINDOW_MS);
    if (launches.length >= CRASH_LAUNCHES) return; // crash loop: observe() reports it; back off
    const log = openSync(join(dir, 'runner.log'), 'a');
    const child = spawn(process.execPath, [this.opts.runnerEntry], {
      detached: true,
      stdio: ['ignore', log, log],
      env: this.runnerEnv(d.runnerId, {}),
    });
    closeSync(log);
    child.unref();
    if (!child.pid) throw new Error(`could not start runner ${d.runnerId}`);
    this.writeAtomic(
      join(dir, 'process.json'),
      JSON.stringify({ pid: child.pid, revision: d.targetRevision, uid: d.uid, startedAt: this.now(), launches: [...launches, this.now()] } satisfies ProcessRecord),
    );
  }

  async observe(d: DesiredRunner): Promise<Diagnosis> {
    const rec = this.readRecord(d.runnerId);
    const now = this.now();
    if (!rec || !alive(rec.pid)) {
      const recent = (rec?.launches ?? []).filter((t) => now - t < CRASH_WINDOW_MS);
      if (recent.length >= CRASH_LAUNCHES) {
        const logTail = this.logTail(d.runnerId);
        return {
          installStatus: 'RUNNER_INSTALL_STATUS_FAILED',
          installError: {
            reason: 'CrashLoopBackOff',
            message: `the runner process exited ${recent.length} times in the last minute`,
            remediationHints: [`Read the runner log: ${join(this.dir(d.runnerId), 'runner.log')}`, 'Check that bubblewrap is installed and cgroups are writable (pnpm start checks both)'],
            diagnosticDetail: logTail,
            occurredAt: new Date(now).toISOString(),
          },
        };
      }
      return { installStatus: 'RUNNER_INSTALL_STATUS_PROVISIONING' };
    }
    const hb = this.opts.heartbeats.last(d.runnerId);
    const fresh = hb && now - hb.receivedAt < hb.intervalMs * 3;
    if (fresh && hb.revision === d.targetRevision && hb.health !== 'UNHEALTHY') {
      return { installStatus: 'RUNNER_INSTALL_STATUS_READY', activeRevision: rec.revision };
    }
    // An adopted runner at the right revision that this (new) controller has not heard from yet:
    // silence so far says nothing, so its last reported status stands until a heartbeat or the grace.
    if (!hb && rec.revision === d.targetRevision && rec.uid === d.uid && now - this.startedAt < FIRST_HEARTBEAT_GRACE_MS) {
      return { installStatus: 'RUNNER_INSTALL_STATUS_PROVISIONING', undetermined: true };
    }
    return { installStatus: 'RUNNER_INSTALL_STATUS_PROVISIONING' };
  }

  async teardown(runnerId: string, _uid: string): Promise<boolean> {
    const dir = this.dir(runnerId);
    if (!existsSync(dir)) return true;
    const rec = this.readRecord(runnerId);
    if (rec && alive(rec.pid)) await this.stopProcess(rec.pid);
    // The runner's sandboxes outlive the runner process by design (adoption after a restart), so
    // deletion asks the runner binary to decommission: reap every sandbox, then exit.
    const code = await this.runDecommission(runnerId, 'RUNNER_DELETED');
    if (code !== 0) return false;
    rmSync(dir, { recursive: true, force: true });
    return true;
  }

  async listDeployed(): Promise<{ runnerId: string; uid: string }[]> {
    const base = join(this.opts.stateDir, 'runners');
    if (!existsSync(base)) return [];
    return readdirSync(base)
      .map((runnerId) => ({ runnerId, uid: this.readRecord(runnerId)?.uid ?? '' }))
      .filter((r) => r.uid !== '');
  }

  /**
   * Every runner process and its sandboxes, stopped in parallel: the process first (so it adopts
   * nothing new), then a decommission that reaps its sandboxes with reason RUNNER_STOPPED. The
   * runner's folder stays, so the next start deploys it again from the same state.
   */
  async stopRunners(): Promise<void> {
    const deployed = await this.listDeployed();
    await Promise.all(
      deployed.map(async ({ runnerId }) => {
        const rec = this.readRecord(runnerId);
        if (rec && alive(rec.pid)) await this.stopProcess(rec.pid);
        await this.runDecommission(runnerId, 'RUNNER_STOPPED');
      }),
    );
  }

  async close(): Promise<void> {}

  private logTail(runnerId: string): string {
    try {
      const text = readFileSync(join(this.dir(runnerId), 'runner.log'), 'utf8');
      return text.slice(-2000);
    } catch {
      return '';
    }
  }

  private async stopProcess(pid: number): Promise<void> {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      return;
    }
    const deadline = this.now() + 10_000;
    while (alive(pid) && this.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    if (alive(pid)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  }

  /** Runs the runner binary in decommission mode over the runner's folder (config, state). */
  private async runDecommission(runnerId: string, reason: 'RUNNER_DELETED' | 'RUNNER_STOPPED'): Promise<number> {
    // Fresh credentials if it can (to publish the sandboxes' ends); reaping goes on without. The
    // config file it reads them from names them already.
    await this.ensureCreds(runnerId).catch(() => undefined);
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [this.opts.runnerEntry], {
        stdio: 'ignore',
        env: this.runnerEnv(runnerId, {
          // The id names its state (cgroups) even when the config file is gone.
          PADDOCK_RUNNER_ID: runnerId,
          PADDOCK_RUNNER_MODE: 'decommission',
          PADDOCK_DECOMMISSION_REASON: reason,
        }),
      });
      child.on('exit', (code) => resolve(code ?? 1));
      child.on('error', () => resolve(1));
    });
  }
}

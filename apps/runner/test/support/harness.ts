import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { SandboxStateEventSchema, subjects, type SandboxSpecInput, type SandboxState, type SandboxStateEvent } from '@paddock/contracts';
import { startNats, waitFor, type ThrowawayNats } from '@paddock/testing';
import { LocalBackend } from '../../src/backend/local';
import { startRunner, type RunningRunner } from '../../src/runner';
import type { RunnerLogger } from '../../src/service/sandbox-service';
import { RunnerTestClient } from './runner-client';

export const quietLogger: RunnerLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** The local backend's built-in image (the host's /usr and /etc essentials, read-only). */
export const BASE_IMAGE = 'paddock/base';
/** A small sandbox that idles until stopped (the local default image idles without a command). */
export const smallSpec = (extra: Partial<SandboxSpecInput> = {}): SandboxSpecInput => ({
  containers: [{ name: 'main', image: BASE_IMAGE, resources: { cpu: '100m', memory: '128Mi' } }],
  maxLifetimeSeconds: 300,
  ...extra,
});

export const ORG = 'org-test';
export const TEST_STATE_ROOT = '/tmp/paddock-runner-test';

/** Unique per test file run: runner ids name cgroups and state directories on the host. */
export function uniqueRunnerId(prefix: string): string {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}`;
}

export function makeLocalBackend(runnerId: string, stateDir: string): LocalBackend {
  return new LocalBackend({ runnerId, stateDir });
}

export interface Harness {
  nats: ThrowawayNats;
  runner: RunningRunner;
  runnerId: string;
  stateDir: string;
  /** The runner's local backend (its cgroup tree holds each sandbox's limits). */
  backend: LocalBackend;
  /** The test's own connection (the gateway's part, and a watcher of the runner's events). */
  nc: NatsConnection;
  client: RunnerTestClient;
  events: SandboxStateEvent[];
  waitState(sandboxId: string, state: SandboxState, timeoutMs?: number): Promise<SandboxStateEvent>;
  createRunning(sandboxId: string, spec?: SandboxSpecInput): Promise<void>;
  stop(): Promise<void>;
}

export async function startHarness(
  opts: {
    runnerId?: string;
    configPath?: string;
    heartbeatIntervalMs?: number;
    sandboxes?: number;
    /** CPU and memory the runner offers (default: far above this host's, so tests are not limited by it). */
    cpuMillis?: number;
    memoryBytes?: number;
    nats?: ThrowawayNats;
  } = {},
): Promise<Harness> {
  const nats = opts.nats ?? (await startNats({ jetstream: false }));
  const runnerId = opts.runnerId ?? uniqueRunnerId('rt');
  // Not mkdtemp: its 0700 mode would stop the sandbox's unprivileged uid from reaching its workspace.
  const stateDir = join(TEST_STATE_ROOT, runnerId);
  mkdirSync(stateDir, { recursive: true, mode: 0o755 });
  const backend = makeLocalBackend(runnerId, stateDir);
  const nc = await nats.connectHarness();
  const events: SandboxStateEvent[] = [];
  nc.subscribe(subjects.sandboxState(runnerId), {
    callback: (_e, m) => void events.push(SandboxStateEventSchema.parse(m.json())),
  });
  await nc.flush();
  const runner = await startRunner({
    natsUrl: nats.url,
    ...(nats.auth ? { natsCredsFile: await nats.credsFile('runner', runnerId) } : {}),
    backend,
    identity: { runnerId, organizationId: ORG },
    ...(opts.configPath ? { configPath: opts.configPath } : {}),
    heartbeatIntervalMs: opts.heartbeatIntervalMs ?? 5_000,
    capacity: { cpuMillis: opts.cpuMillis ?? 64_000, memoryBytes: opts.memoryBytes ?? 64 * 1024 ** 3, sandboxes: opts.sandboxes ?? 100 },
    caps: { pidsMax: 512, diskBytes: 1024 ** 3, openFilesMax: 4096 },
    streamIdleTimeoutMs: 30_000,
    log: quietLogger,
    configPollMs: 200,
  });
  const client = new RunnerTestClient(nc, runnerId);
  const waitState = (sandboxId: string, state: SandboxState, timeoutMs = 15_000): Promise<SandboxStateEvent> =>
    waitFor(() => events.find((e) => e.sandboxId === sandboxId && e.state === state), {
      timeoutMs,
      what: `${sandboxId} in ${state} (seen: ${events
        .filter((e) => e.sandboxId === sandboxId)
        .map((e) => `${e.state}${e.message ? `: ${e.message}` : ''}`)
        .join(', ')})`,
    });
  return {
    nats,
    runner,
    runnerId,
    stateDir,
    backend,
    nc,
    client,
    events,
    waitState,
    async createRunning(sandboxId, spec = smallSpec()) {
      await client.call('create', { sandboxId, organizationId: ORG, spec });
      await waitState(sandboxId, 'STATE_RUNNING');
    },
    async stop() {
      // Tests clean up their sandboxes: stop every one still alive, then the runner and its backend.
      const live = runner.service.list({ organizationId: ORG });
      await Promise.all(
        live.map((s) => client.call('delete', { sandboxId: s.sandboxId, organizationId: ORG, gracePeriodSeconds: 0 }).catch(() => undefined)),
      );
      await waitFor(() => runner.service.capacity().sandboxesRunning === 0, { timeoutMs: 15_000, what: 'every sandbox stopped' }).catch(
        () => undefined,
      );
      const cg = backend.cgroupTree();
      await waitFor(() => cg.listSandboxes().length === 0, { timeoutMs: 10_000 }).catch(() => undefined);
      await runner.stop();
      await nc.drain();
      if (!opts.nats) await nats.stop();
      // Every sandbox was stopped through the API: none of its cgroups may be left behind.
      const leftover = cg.listSandboxes();
      for (const id of leftover) await cg.killAndRemove(id);
      await waitFor(() => cg.supervisorPids().length === 0, { timeoutMs: 5_000 }).catch(() => undefined);
      cg.removeRunnerTree();
      rmSync(stateDir, { recursive: true, force: true });
      if (leftover.length) throw new Error(`sandbox cgroups left behind after stop: ${leftover.join(', ')}`);
    },
  };
}

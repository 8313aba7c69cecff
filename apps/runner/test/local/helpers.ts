import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '@paddock/testing';
import type { BackendEvent, LaunchSpec } from '../../src/backend/sandbox-backend';
import { LocalBackend, type LocalBackendOptions } from '../../src/backend/local';
import { runnerTreeName } from '../../src/backend/local/cgroups';

/** Every test backend gets its own runner id, state directory and cgroup subtree. */
export const TEST_STATE_ROOT = '/tmp/paddock-local-test';
let counter = 0;

export interface TestBackend {
  backend: LocalBackend;
  events: BackendEvent[];
  runnerId: string;
  stateDir: string;
}

export function makeBackend(extra: Partial<LocalBackendOptions> = {}): TestBackend {
  const runnerId = extra.runnerId ?? `t${process.pid}-${++counter}`;
  const stateDir = extra.stateDir ?? join(TEST_STATE_ROOT, runnerId);
  const backend = new LocalBackend({ runnerId, stateDir, ...extra });
  const events: BackendEvent[] = [];
  backend.onEvent((e) => events.push(e));
  return { backend, events, runnerId, stateDir };
}

export function spec(sandboxId: string, over: Partial<LaunchSpec> = {}): LaunchSpec {
  return {
    sandboxId,
    organizationId: 'org-test',
    runnerId: 'runner-test',
    image: '',
    command: [],
    env: {},
    cpuMillis: 1000,
    memoryBytes: 256 * 1024 * 1024,
    pidsMax: 128,
    diskBytes: 64 * 1024 * 1024,
    openFilesMax: 1024,
    lifetimeSeconds: 300,
    network: 'none',
    files: [],
    labels: { test: 'local' },
    ...over,
  };
}

export function stateOf(t: TestBackend, id: string): BackendEvent | undefined {
  return [...t.events].reverse().find((e) => e.sandboxId === id);
}

export async function waitForState(t: TestBackend, id: string, states: string[], timeoutMs = 15_000): Promise<BackendEvent> {
  return waitFor(() => t.events.find((e) => e.sandboxId === id && states.includes(e.state)), {
    timeoutMs,
    what: `${id} to reach ${states.join('|')} (last: ${stateOf(t, id)?.state})`,
  });
}

export async function launchRunning(t: TestBackend, s: LaunchSpec): Promise<void> {
  await t.backend.launch(s);
  const e = await waitForState(t, s.sandboxId, ['STATE_RUNNING', 'STATE_FAILED', 'STATE_COMPLETED']);
  if (e.state !== 'STATE_RUNNING') throw new Error(`${s.sandboxId} did not start: ${e.state} ${e.reason} ${e.message}`);
}

/** Processes whose command line mentions this test backend's state directory (supervisors, bwrap). */
export function processesMentioning(text: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid=,stat=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((l) => l.includes(text) && !l.includes('ps -eo') && !/^\s*\d+\s+Z/.test(l))
    .map((l) => l.trim().slice(0, 160));
}

/** Reaps everything the backend knows or left behind, then checks and removes its trees. */
export async function destroyBackend(t: TestBackend): Promise<{ leftoverProcesses: string[]; leftoverCgroups: string[] }> {
  const recovered = await t.backend.recover().catch(() => []);
  for (const r of recovered) await t.backend.reap(r.sandboxId, 'RUNNER_DELETED');
  await t.backend.close();
  const cg = t.backend.cgroupTree();
  const leftoverCgroups = cg.listSandboxes();
  for (const id of leftoverCgroups) await cg.killAndRemove(id);
  // The zygote is killed by close(); give the kernel a moment to reap it.
  await waitFor(() => cg.supervisorPids().length === 0, { timeoutMs: 5000 }).catch(() => undefined);
  const leftoverProcesses = [...cg.supervisorPids().map((p) => `supervisor cgroup: ${p}`), ...processesMentioning(t.stateDir)];
  for (const l of leftoverProcesses) {
    try {
      process.kill(Number(/\d+/.exec(l)?.[0]), 'SIGKILL');
    } catch {
      // gone
    }
  }
  cg.removeRunnerTree();
  if (existsSync(t.stateDir)) rmSync(t.stateDir, { recursive: true, force: true });
  return { leftoverProcesses, leftoverCgroups };
}

export function cgroupValue(t: TestBackend, id: string, controller: string, file: string): string {
  return readFileSync(join('/sys/fs/cgroup', controller, 'paddock', runnerTreeName(t.runnerId, t.stateDir), id, file), 'utf8').trim();
}

export async function collect(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(Buffer.isBuffer(c) ? c : Buffer.from(c));
  return Buffer.concat(parts);
}

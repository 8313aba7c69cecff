import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  isTerminalSandboxState,
  PaddockError,
  RunnerHeartbeatSchema,
  SandboxStateEventSchema,
  subjects,
  type RunnerHeartbeat,
  type SandboxStateEvent,
} from '@paddock/contracts';
import { removeStateDir, startNats, waitFor, type ThrowawayNats } from '@paddock/testing';
import { runnerCgroupsOf } from '../../src/backend/local';
import { runnerTreeName } from '../../src/backend/local/cgroups';
import { BASE_IMAGE, ORG, smallSpec, TEST_STATE_ROOT, uniqueRunnerId } from '../support/harness';
import { RunnerTestClient } from '../support/runner-client';
import { spawnRunnerProcess, type RunnerProcess } from '../support/runner-process';

const CGROUP_ROOT = '/sys/fs/cgroup';
const N = Number(process.env.PADDOCK_RESTART_SANDBOXES ?? 20);
/** A few sandboxes end on their own while the runner is dead: they must be reported, not lost. */
const SHORT = 5;

/** Sandbox cgroups of a runner's tree, over every controller (cgroup v1) or the unified tree (v2). */
function sandboxCgroups(tree: string): { dirs: string[]; procs: number } {
  const bases = existsSync(join(CGROUP_ROOT, 'cgroup.controllers'))
    ? [join(CGROUP_ROOT, 'paddock', tree)]
    : ['cpu', 'memory', 'pids'].map((c) => join(CGROUP_ROOT, c, 'paddock', tree));
  const dirs: string[] = [];
  let procs = 0;
  for (const b of bases) {
    if (!existsSync(b)) continue;
    for (const e of readdirSync(b, { withFileTypes: true })) {
      if (!e.isDirectory() || e.name.startsWith('_')) continue;
      dirs.push(join(b, e.name));
      const f = join(b, e.name, 'cgroup.procs');
      if (existsSync(f)) procs += readFileSync(f, 'utf8').split('\n').filter(Boolean).length;
    }
  }
  return { dirs, procs };
}

describe('runner service: SIGKILL of the runner process with sandboxes running', () => {
  let nats: ThrowawayNats;
  let nc: NatsConnection;
  let child: RunnerProcess | undefined;
  const runnerId = uniqueRunnerId('rk');
  const tree = runnerTreeName(runnerId, join(TEST_STATE_ROOT, runnerId));
  const events: SandboxStateEvent[] = [];
  const beats: RunnerHeartbeat[] = [];

  beforeAll(async () => {
    nats = await startNats({ jetstream: false });
    nc = await nats.connectHarness();
    nc.subscribe(subjects.sandboxState(runnerId), { callback: (_e, m) => void events.push(SandboxStateEventSchema.parse(m.json())) });
    nc.subscribe(subjects.runnerHeartbeat(runnerId), { callback: (_e, m) => void beats.push(RunnerHeartbeatSchema.parse(m.json())) });
    await nc.flush();
  });
  afterAll(async () => {
    child?.child.kill('SIGKILL');
    await nc?.drain();
    await nats?.stop();
    await removeStateDir(join(TEST_STATE_ROOT, runnerId));
  });

  it(`adopts or reaps every one of ${N} sandboxes after a restart, leaving no orphan process or cgroup`, async () => {
    const env = {
      ...process.env,
      PADDOCK_RUNNER_ID: runnerId,
      PADDOCK_ORGANIZATION_ID: ORG,
      ...(await nats.env('runner', runnerId)),
      PADDOCK_RUNNER_STATE_DIR: TEST_STATE_ROOT,
      PADDOCK_HEARTBEAT_INTERVAL_MS: '500',
      PADDOCK_CAPACITY_CPU_MILLIS: '64000',
      PADDOCK_CAPACITY_MEMORY_BYTES: String(64 * 1024 ** 3),
    };
    const client = new RunnerTestClient(nc, runnerId);
    const up = async (): Promise<string> => {
      const seen = new Set(beats.map((b) => b.instanceId));
      child = spawnRunnerProcess(env);
      const beat = await waitFor(() => beats.find((b) => !seen.has(b.instanceId)), { timeoutMs: 90_000, what: 'a heartbeat of the new runner process' });
      return beat.instanceId;
    };

    const first = await up();
    const ids = Array.from({ length: N }, (_, i) => `rk-${i}`);
    const spec = (i: number) =>
      i < SHORT
        ? smallSpec({ containers: [{ name: 'main', image: BASE_IMAGE, resources: { cpu: '100m', memory: '64Mi' }, command: ['sleep', '2'] }] })
        : smallSpec({ containers: [{ name: 'main', image: BASE_IMAGE, resources: { cpu: '100m', memory: '64Mi' } }] });
    await Promise.all(ids.map((id, i) => client.call('create', { sandboxId: id, organizationId: ORG, spec: spec(i) })));
    await waitFor(() => ids.every((id) => events.some((e) => e.sandboxId === id && e.state === 'STATE_RUNNING')), {
      timeoutMs: 60_000,
      what: 'every sandbox RUNNING',
    });

    const killed = (child as RunnerProcess).child;
    const exited = new Promise((r) => killed.once('exit', r));
    killed.kill('SIGKILL');
    await exited;
    const before = events.length;

    const second = await up();
    expect(second).not.toBe(first);

    // Every sandbox is accounted for: RUNNING and reachable over NATS, or terminal with a reason.
    const outcome = new Map<string, string>();
    for (const [i, id] of ids.entries()) {
      const got = await client.call('get', { sandboxId: id, organizationId: ORG });
      const st = got.sandbox.status;
      if (st.state === 'STATE_RUNNING') {
        try {
          const r = await client.call('exec', { sandboxId: id, organizationId: ORG, argv: ['echo', id] });
          expect(Buffer.from(r.stdoutBase64, 'base64').toString()).toBe(`${id}\n`);
          outcome.set(id, 'adopted');
        } catch (e) {
          // A short one may end between the get and the exec: then the runner says so, by name.
          if (!(i < SHORT && e instanceof PaddockError)) throw e;
          expect(['CWSANDBOX_SANDBOX_NOT_RUNNING', 'CWSANDBOX_SANDBOX_TERMINATED'], e.message).toContain(e.reason);
          outcome.set(id, 'ended-during-check');
        }
      } else {
        expect(isTerminalSandboxState(st.state), `${id} is ${st.state}`).toBe(true);
        expect(st.stateReason, `${id} has a reason`).toBeDefined();
        outcome.set(id, `terminal:${st.stateReason}`);
      }
      if (i >= SHORT) expect(outcome.get(id)).toBe('adopted');
    }
    // The short ones end (while the runner was down, or after adoption) and that is reported.
    for (const id of ids.slice(0, SHORT)) {
      const end = await waitFor(() => events.slice(before).find((e) => e.sandboxId === id && isTerminalSandboxState(e.state)), {
        timeoutMs: 20_000,
        what: `terminal report of ${id}`,
      });
      expect(end.reason).toBeDefined();
    }
    // No cgroup without an adopted sandbox behind it, and nothing running in an ended one.
    const adopted = ids.filter((id) => outcome.get(id) === 'adopted' && !ids.slice(0, SHORT).includes(id));
    await waitFor(() => sandboxCgroups(tree).dirs.length === adopted.length * (existsSync(join(CGROUP_ROOT, 'cgroup.controllers')) ? 1 : 3), {
      timeoutMs: 20_000,
      what: `only the adopted sandboxes' cgroups (have ${sandboxCgroups(tree).dirs.length})`,
    });

    // Clean up through the API; then nothing of this runner's sandboxes is left on the host.
    await Promise.all(adopted.map((id) => client.call('delete', { sandboxId: id, organizationId: ORG, gracePeriodSeconds: 0 })));
    await waitFor(() => adopted.every((id) => events.some((e) => e.sandboxId === id && isTerminalSandboxState(e.state))), {
      timeoutMs: 30_000,
      what: 'every adopted sandbox stopped',
    });
    await waitFor(() => sandboxCgroups(tree).dirs.length === 0, { timeoutMs: 20_000, what: 'no sandbox cgroup left' });
    expect(sandboxCgroups(tree).procs).toBe(0);
    const last = child as RunnerProcess;
    await last.stop();
    // Graceful: heartbeats stopped and NATS drained before the process left.
    expect(last.log()).toMatch(/Runner stopped/);
    const cg = runnerCgroupsOf({ runnerId, stateDir: join(TEST_STATE_ROOT, runnerId) });
    expect(cg.listSandboxes()).toEqual([]);
    cg.removeRunnerTree();
  }, 300_000);
});

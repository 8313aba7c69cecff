import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { waitFor } from '@paddock/testing';
import { readFileSync } from 'node:fs';
import { destroyBackend, launchRunning, makeBackend, processesMentioning, spec, TEST_STATE_ROOT, waitForState, type TestBackend } from './helpers';

const COUNT = Number(process.env.PADDOCK_SOAK ? 100 : 20);

describe('local backend: runner crash and recovery', () => {
  it(`adopts ${COUNT} sandboxes after the runner is SIGKILLed, then leaves zero orphans`, async () => {
    const runnerId = `recover${process.pid}`;
    const stateDir = join(TEST_STATE_ROOT, runnerId);
    const child = spawn(process.execPath, ['--conditions=@paddock/source', '--import', 'tsx', join(__dirname, 'fixtures', 'hold-backend.ts'), runnerId, stateDir, String(COUNT)], {
      cwd: join(__dirname, '..', '..'),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    const t = makeBackend({ runnerId, stateDir });
    try {
      await waitFor(() => out.includes('READY'), { timeoutMs: 150_000, what: 'the crashing runner to start its sandboxes' });
      child.kill('SIGKILL');
      await exited;
      // Let the short sandbox finish while no runner is alive.
      await waitFor(() => processesMentioning(join(stateDir, 'sandboxes', 'short')).length === 0, { timeoutMs: 20_000 });

      const recovered = await t.backend.recover();
      expect(recovered.map((r) => r.sandboxId).sort()).toEqual(Array.from({ length: COUNT }, (_, i) => `sbx-${i}`).sort());
      for (const r of recovered) {
        expect(r.state).toBe('STATE_RUNNING');
        expect(r.labels.index).toBe(r.sandboxId.slice(4));
        expect(r.deadline.getTime() - r.startedAt.getTime()).toBe(600_000);
      }
      // The one that ended while the runner was down is reported terminal, with its reason, and reaped.
      expect(await waitForState(t, 'short', ['STATE_COMPLETED', 'STATE_FAILED'])).toMatchObject({ state: 'STATE_FAILED', reason: 'EXITED', exitCode: 4 });
      // Every adopted sandbox is still reachable.
      for (const r of recovered) {
        const res = await t.backend.exec(r.sandboxId, { argv: ['hostname'] });
        expect(res.stdout.toString().trim()).toBe(r.sandboxId);
      }
      await t.backend.stop('sbx-0', 1, 'STOPPED_BY_USER');
      expect(await waitForState(t, 'sbx-0', ['STATE_COMPLETED', 'STATE_FAILED'])).toMatchObject({ reason: 'STOPPED_BY_USER' });
      for (const r of recovered) await t.backend.reap(r.sandboxId, 'RUNNER_DELETED');
      expect(t.backend.cgroupTree().listSandboxes()).toEqual([]);
    } finally {
      child.kill('SIGKILL');
      const left = await destroyBackend(t);
      expect(left).toEqual({ leftoverProcesses: [], leftoverCgroups: [] });
    }
  }, 240_000);

  it('fails closed when a sandbox supervisor dies: the sandbox dies with it and is cleaned up', async () => {
    const t = makeBackend();
    try {
      await launchRunning(t, spec('orphan-candidate', { command: ['sleep', '1000'] }));
      const dir = join(t.stateDir, 'sandboxes', 'orphan-candidate');
      const supervisor = Number(readFileSync(join(dir, 'supervisor.pid'), 'utf8'));
      process.kill(supervisor, 'SIGKILL');
      const end = await waitForState(t, 'orphan-candidate', ['STATE_FAILED', 'STATE_COMPLETED']);
      expect(end).toMatchObject({ state: 'STATE_FAILED', reason: 'RUNNER_LOST' });
      await waitFor(() => processesMentioning(dir).length === 0, { timeoutMs: 10_000, what: 'the sandbox processes to die' });
      expect(t.backend.cgroupTree().listSandboxes()).toEqual([]);
    } finally {
      const left = await destroyBackend(t);
      expect(left).toEqual({ leftoverProcesses: [], leftoverCgroups: [] });
    }
  }, 60_000);

  it('two runners with the same id and different state directories: one restarting adopts its own sandboxes and leaves the other’s running', async () => {
    const runnerId = `twin${process.pid}`;
    const a = makeBackend({ runnerId, stateDir: join(TEST_STATE_ROOT, `${runnerId}-a`) });
    const b = makeBackend({ runnerId, stateDir: join(TEST_STATE_ROOT, `${runnerId}-b`) });
    let restarted: TestBackend | undefined;
    try {
      await launchRunning(a, spec('a-1', { command: ['sleep', '1000'] }));
      await launchRunning(b, spec('b-1', { command: ['sleep', '1000'] }));
      expect(a.backend.cgroupTree().supervisorsDir()).not.toBe(b.backend.cgroupTree().supervisorsDir());
      // The long-lived processes of b's supervisor tree (zygote, warm slots, b-1's supervisor): a
      // launcher passes through that cgroup for a moment on its way into a sandbox's, so read the
      // set until it holds still.
      let bSupervisors = b.backend.cgroupTree().supervisorPids();
      await waitFor(
        async () => {
          await new Promise((r) => setTimeout(r, 200));
          const now = b.backend.cgroupTree().supervisorPids();
          const same = now.length === bSupervisors.length && now.every((p) => bSupervisors.includes(p));
          bSupervisors = now;
          return same;
        },
        { timeoutMs: 10_000, what: "b's supervisor tree to hold still" },
      );

      // Runner a restarts (a new process on the same state directory) and recovers.
      await a.backend.close();
      restarted = makeBackend({ runnerId, stateDir: a.stateDir });
      const recovered = await restarted.backend.recover();
      expect(recovered.map((r) => r.sandboxId)).toEqual(['a-1']);
      expect((await restarted.backend.exec('a-1', { argv: ['hostname'] })).stdout.toString().trim()).toBe('a-1');

      // b's sandbox, zygote and warm slots were not touched: it still runs and launches.
      expect(b.events.filter((e) => e.sandboxId === 'b-1').map((e) => e.state)).toEqual(['STATE_CREATING', 'STATE_RUNNING']);
      expect((await b.backend.exec('b-1', { argv: ['hostname'] })).stdout.toString().trim()).toBe('b-1');
      expect(b.backend.cgroupTree().supervisorPids()).toEqual(expect.arrayContaining(bSupervisors));
      expect(b.backend.cgroupTree().listSandboxes()).toEqual(['b-1']);
      await launchRunning(b, spec('b-2'));
    } finally {
      const left = await Promise.all([restarted ?? a, b].map((t) => destroyBackend(t)));
      expect(left).toEqual([
        { leftoverProcesses: [], leftoverCgroups: [] },
        { leftoverProcesses: [], leftoverCgroups: [] },
      ]);
    }
  }, 120_000);
});

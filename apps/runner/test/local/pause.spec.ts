import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '@paddock/testing';
import { cgroupValue, destroyBackend, launchRunning, makeBackend, spec, waitForState, type TestBackend } from './helpers';

/** A counter the sandbox bumps as fast as it can, persisted where the host can read it. */
const COUNTER = ['/bin/sh', '-c', 'i=0; while :; do i=$((i+1)); echo $i > /workspace/count.tmp; mv /workspace/count.tmp /workspace/count; done'];

function count(t: TestBackend, id: string): number {
  try {
    return Number(readFileSync(join(t.stateDir, 'sandboxes', id, 'disk', 'workspace', 'count'), 'utf8').trim() || 0);
  } catch {
    return 0;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('local backend: pause and resume', () => {
  it('freezes every process (the counter stops, no CPU is used), then resumes where it stopped; the lifetime stops while paused', async () => {
    const t = makeBackend();
    try {
      await launchRunning(t, spec('p-counter', { command: COUNTER, cpuMillis: 500, lifetimeSeconds: 6 }));
      await waitFor(() => count(t, 'p-counter') > 100, { timeoutMs: 10_000, what: 'the counter to run' });

      await t.backend.pause('p-counter');
      expect(t.backend.usage('p-counter')).toBeDefined();
      expect(cgroupValue(t, 'p-counter', 'freezer', 'freezer.state')).toBe('FROZEN');
      expect(t.events.at(-1)).toMatchObject({ sandboxId: 'p-counter', state: 'STATE_PAUSED' });
      const frozenAt = count(t, 'p-counter');
      const cpuFrozen = t.backend.usage('p-counter')?.cpuNanos;
      // Paused longer than the whole 6 s lifetime: a lifetime that kept running would end it.
      await sleep(7000);
      expect(count(t, 'p-counter')).toBe(frozenAt);
      expect(t.backend.usage('p-counter')?.cpuNanos).toBe(cpuFrozen);
      expect(t.events.filter((e) => e.sandboxId === 'p-counter').map((e) => e.state)).not.toContain('STATE_TERMINATING');

      // Idempotent: pausing again changes nothing.
      await t.backend.pause('p-counter');
      await t.backend.resume('p-counter');
      expect(cgroupValue(t, 'p-counter', 'freezer', 'freezer.state')).toBe('THAWED');
      expect(t.events.at(-1)).toMatchObject({ sandboxId: 'p-counter', state: 'STATE_RUNNING' });
      await waitFor(() => count(t, 'p-counter') > frozenAt + 100, { timeoutMs: 10_000, what: 'the counter to continue' });
      // The same process continued: a restarted counter would have started again from 1.
      expect(count(t, 'p-counter')).toBeGreaterThan(frozenAt);
      const res = await t.backend.exec('p-counter', { argv: ['/bin/cat', '/workspace/count'] });
      expect(Number(res.stdout.toString())).toBeGreaterThan(frozenAt);

      // The rest of the lifetime still applies once resumed.
      const end = await waitForState(t, 'p-counter', ['STATE_COMPLETED', 'STATE_FAILED'], 20_000);
      expect(end.reason).toBe('LIFETIME_EXPIRED');
    } finally {
      expect(await destroyBackend(t)).toEqual({ leftoverProcesses: [], leftoverCgroups: [] });
    }
  }, 60_000);

  it('stops a paused sandbox (thawing it first) and leaves nothing behind', async () => {
    const t = makeBackend();
    try {
      await launchRunning(t, spec('p-stop', { command: COUNTER }));
      await t.backend.pause('p-stop');
      await t.backend.stop('p-stop', 1, 'STOPPED_BY_USER');
      expect(await waitForState(t, 'p-stop', ['STATE_COMPLETED', 'STATE_FAILED'])).toMatchObject({ reason: 'STOPPED_BY_USER' });
    } finally {
      expect(await destroyBackend(t)).toEqual({ leftoverProcesses: [], leftoverCgroups: [] });
    }
  }, 30_000);

  it('a runner restart while paused adopts the sandbox as paused, with the lifetime it had left; it resumes from the new runner', async () => {
    const first = makeBackend();
    const second = makeBackend({ runnerId: first.runnerId, stateDir: first.stateDir });
    try {
      await launchRunning(first, spec('p-adopt', { command: COUNTER, lifetimeSeconds: 300 }));
      await waitFor(() => count(first, 'p-adopt') > 100, { timeoutMs: 10_000, what: 'the counter to run' });
      await first.backend.pause('p-adopt');
      const frozenAt = count(first, 'p-adopt');
      await first.backend.close();

      const recovered = await second.backend.recover();
      expect(recovered).toHaveLength(1);
      expect(recovered[0]).toMatchObject({ sandboxId: 'p-adopt', state: 'STATE_PAUSED' });
      // Still about 300 s left, counted from now (the pause took none of it).
      const left = (recovered[0]?.deadline.getTime() ?? 0) - Date.now();
      expect(left).toBeGreaterThan(295_000);
      expect(count(second, 'p-adopt')).toBe(frozenAt);
      await second.backend.resume('p-adopt');
      await waitFor(() => count(second, 'p-adopt') > frozenAt, { timeoutMs: 10_000, what: 'the adopted counter to continue' });
    } finally {
      await first.backend.close();
      expect(await destroyBackend(second)).toEqual({ leftoverProcesses: [], leftoverCgroups: [] });
    }
  }, 60_000);
});

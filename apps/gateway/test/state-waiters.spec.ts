import { SandboxStateWaiters } from '../src/sandboxes/state-waiters';

describe('SandboxStateWaiters (long-poll wake-ups)', () => {
  it('wakes every armed waiter of a sandbox on notify, and only those', async () => {
    const w = new SandboxStateWaiters();
    const a1 = w.arm('a');
    const a2 = w.arm('a');
    const b = w.arm('b');
    expect(w.size).toBe(3);
    const woken: string[] = [];
    const waits = [a1.within(10_000).then(() => woken.push('a1')), a2.within(10_000).then(() => woken.push('a2'))];
    let bWoken = false;
    void b.within(10_000).then(() => (bWoken = true));
    w.notify('a');
    await Promise.all(waits);
    expect(woken.sort()).toEqual(['a1', 'a2']);
    expect(bWoken).toBe(false);
    for (const x of [a1, a2, b]) x.disarm();
    expect(w.size).toBe(0);
  });

  it('a notify between arming and waiting is not lost (the waiter returns at once)', async () => {
    const w = new SandboxStateWaiters();
    const armed = w.arm('s');
    w.notify('s'); // e.g. the state changed while the waiter was reading the row
    const t0 = performance.now();
    await armed.within(10_000);
    expect(performance.now() - t0).toBeLessThan(1_000);
    armed.disarm();
  });

  it('resolves at the re-check interval without a notify; disarming forgets the waiter', async () => {
    const w = new SandboxStateWaiters();
    const armed = w.arm('quiet');
    const t0 = performance.now();
    await armed.within(30);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(25);
    armed.disarm();
    armed.disarm(); // idempotent
    expect(w.size).toBe(0);
    w.notify('quiet'); // nothing armed: a no-op
  });

  it('past its bound, a waiter is not tracked and sleeps its interval (polling, never an error)', async () => {
    const w = new SandboxStateWaiters(2);
    const x = w.arm('x');
    const y = w.arm('y');
    const z = w.arm('z');
    expect(w.size).toBe(2);
    w.notify('z');
    const t0 = performance.now();
    await z.within(30);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(25);
    for (const a of [x, y, z]) a.disarm();
    expect(w.size).toBe(0);
  });
});

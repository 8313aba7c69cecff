import type { SandboxSpecInput, SandboxStateEvent, WarmPoolInput } from '@paddock/contracts';
import { WarmPoolSchema } from '@paddock/contracts';
import { PolicyHolder } from '../../src/policy/policy-holder';
import { SandboxService, type RunnerLogger } from '../../src/service/sandbox-service';
import { WarmPoolBackend } from '../../src/service/warm-pools';
import { MemoryBackend } from '../support/memory-backend';

const quiet: RunnerLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };
const identity = { runnerId: 'r1', organizationId: 'org-1', clusterId: 'c1', zone: 'z1', runnerGroupId: 'default' };
const requirements = {
  requests: { cpu: '50m', memory: '64Mi' },
  limits: { cpu: '1', memory: '256Mi' },
};
const TEMPLATE: SandboxSpecInput = {
  containers: [{ name: 'main', image: 'local', resourceRequirements: requirements }],
  maxLifetimeSeconds: 600,
};
const matching: SandboxSpecInput = {
  containers: [{ name: 'main', image: 'local', resourceRequirements: requirements }],
  maxLifetimeSeconds: 300,
};

/**
 * The pools' refill timing, on fake timers (the service's clock reads the faked Date): what is
 * asserted is which launches reached the backend by a given point of the take sequence.
 */
describe('warm pool refill', () => {
  let inner: MemoryBackend;
  let warm: WarmPoolBackend;
  let service: SandboxService;
  let events: SandboxStateEvent[];
  let n = 0;

  const setup = async (size: number, sandboxesMax = 1_000): Promise<void> => {
    vi.useFakeTimers({
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'clearImmediate', 'Date'],
    });
    inner = new MemoryBackend();
    events = [];
    // Priming a warm sandbox is a file call; the in-memory one answers at once (no real I/O under fake timers).
    inner.stat = async (_id, path) => ({
      path,
      type: 'directory',
      size: 0,
      mode: 0o755,
      modifiedAt: new Date(),
    });
    const policy = new PolicyHolder();
    const clock = { now: () => new Date() };
    const caps = { pidsMax: 256, diskBytes: 1024 ** 3, openFilesMax: 1024 };
    warm = new WarmPoolBackend({ inner, policy, identity, caps, clock, log: quiet });
    service = new SandboxService({
      backend: warm,
      identity,
      policy,
      capacity: { cpuMillis: 64_000, memoryBytes: 64 * 1024 ** 3, sandboxes: sandboxesMax },
      caps,
      publishState: (e) => void events.push(e),
      clock,
      log: quiet,
      warm,
    });
    warm.bindCapacity(() => service.capacity());
    const pool: WarmPoolInput = { name: 'p', size, template: TEMPLATE };
    warm.configure([WarmPoolSchema.parse(pool)]);
    await vi.advanceTimersByTimeAsync(10);
    expect(warm.status()[0]).toMatchObject({ size, ready: size });
  };
  const take = async (): Promise<string> => {
    const sandboxId = `sb-${n++}`;
    await service.create({ sandboxId, organizationId: 'org-1', spec: matching });
    return sandboxId;
  };

  afterEach(async () => {
    service.close();
    await warm.close();
    vi.useRealTimers();
  });

  it('claims the warm sandbox at admission: of two creates in one tick on a full runner with one warm, the second is refused for capacity, not launched cold past it', async () => {
    // Room for one sandbox, which the pool's one warm member holds.
    await setup(1, 1);
    const filled = inner.launches.length;
    const [a, b] = await Promise.allSettled([take(), take()]);
    expect(a.status).toBe('fulfilled');
    expect(b.status).toBe('rejected');
    expect(String((b as PromiseRejectedResult).reason)).toMatch(/capacity/);
    expect(warm.warmTakes).toBe(1);
    expect(warm.coldLaunches).toBe(0);
    expect(inner.launches.length).toBe(filled);
    expect(service.capacity()).toMatchObject({ sandboxesRunning: 1, sandboxesMax: 1 });
  });

  it('gives an unlaunched claim back to its pool, or stops the member when its pool is gone meanwhile', async () => {
    await setup(2);
    const launchOf = (sandboxId: string) => ({ ...inner.launches[0], sandboxId, labels: {}, lifetimeSeconds: 300 }) as (typeof inner.launches)[number];
    expect(warm.reserve(launchOf('sb-claim-1'))).toBe(true);
    expect(warm.status()[0]).toMatchObject({ ready: 1 });
    expect(warm.held().sandboxes).toBe(1);
    warm.release('sb-claim-1');
    expect(warm.status()[0]).toMatchObject({ ready: 2 });
    // Claimed, then the pool is removed: the release stops the member instead of keeping it.
    expect(warm.reserve(launchOf('sb-claim-2'))).toBe(true);
    const unclaimed = warm.memberIds('p');
    warm.configure([]);
    warm.release('sb-claim-2');
    await vi.advanceTimersByTimeAsync(10);
    expect(warm.status()).toEqual([]);
    // Both members stopped: the idle one by the drain, the claimed one by its release.
    const stopped = new Set(inner.stops.map((x) => x.sandboxId));
    expect(stopped.size).toBe(2);
    expect(unclaimed).toHaveLength(1);
    expect(stopped.has(unclaimed[0] as string)).toBe(true);
  });

  it('waits for a burst of takes to pause before launching any replacement, then replaces every one taken', async () => {
    await setup(10);
    const filled = inner.launches.length;
    // Takes 150 ms apart: each one pushes the refill back, so none launches during the burst.
    for (let i = 0; i < 6; i++) {
      await take();
      await vi.advanceTimersByTimeAsync(150);
    }
    expect(warm.warmTakes).toBe(6);
    expect(inner.launches.length).toBe(filled);
    expect(warm.status()[0]).toMatchObject({ ready: 4 });
    // The capacity the pool holds is its idle members' only (the taken ones are their creates').
    expect(warm.held().sandboxes).toBe(4);
    expect(service.capacity()).toMatchObject({ sandboxesRunning: 6, sandboxesWarm: 4 });
    // Quiet: the refill replaces all six.
    await vi.advanceTimersByTimeAsync(100);
    expect(inner.launches.length).toBe(filled + 6);
    expect(warm.status()[0]).toMatchObject({ ready: 10 });
    expect(service.capacity()).toMatchObject({ sandboxesRunning: 6, sandboxesWarm: 10 });
  });

  it('refills a steady stream of takes that never pauses, at the latest two seconds after its first take', async () => {
    await setup(30);
    const filled = inner.launches.length;
    let refilledAtTake = -1;
    let refilled = 0;
    for (let i = 0; i < 25; i++) {
      await take();
      await vi.advanceTimersByTimeAsync(100);
      if (refilledAtTake < 0 && inner.launches.length > filled) {
        refilledAtTake = i;
        refilled = inner.launches.length - filled;
      }
    }
    // Takes at 0, 100, ... ms: none launches a replacement before the bound, 2 s after the first;
    // the refill then runs behind the take of that moment (the 21st) and replaces all 21.
    expect(refilledAtTake).toBe(20);
    expect(refilled).toBe(21);
    expect(warm.warmTakes).toBe(25);
  });

  it('launches nothing for other reasons while a burst is served (a replaced member waits for the refill too)', async () => {
    await setup(5);
    const filled = inner.launches.length;
    await take();
    const [victim] = warm.memberIds('p');
    inner.finish(victim as string, 1);
    await vi.advanceTimersByTimeAsync(50);
    expect(inner.launches.length).toBe(filled);
    await vi.advanceTimersByTimeAsync(200);
    expect(inner.launches.length).toBe(filled + 2);
    expect(warm.status()[0]).toMatchObject({ ready: 5 });
  });

  it("pushes the refill back while the taken sandboxes' first commands run too, within the same bound", async () => {
    await setup(5);
    const filled = inner.launches.length;
    const id = await take();
    // Commands 150 ms apart on the taken sandbox: the burst is still being served, nothing launches.
    for (let i = 0; i < 4; i++) {
      await vi.advanceTimersByTimeAsync(150);
      await service.exec({ sandboxId: id, organizationId: 'org-1', argv: ['true'] });
    }
    expect(inner.launches.length).toBe(filled);
    await vi.advanceTimersByTimeAsync(250);
    expect(inner.launches.length).toBe(filled + 1);
    // A sandbox that never pauses its calls does not hold the refill back past the bound.
    const busy = await take();
    for (let t = 0; t < 2_100; t += 100) {
      await service.exec({ sandboxId: busy, organizationId: 'org-1', argv: ['true'] });
      await vi.advanceTimersByTimeAsync(100);
    }
    expect(inner.launches.length).toBe(filled + 2);
  });

  it("answers a warm take's create RUNNING, publishing that state alone, before the reply", async () => {
    await setup(2);
    const sandboxId = `sb-${n++}`;
    const reply = service.create({ sandboxId, organizationId: 'org-1', spec: matching });
    // Nothing is published while the create is being answered...
    expect(events.filter((e) => e.sandboxId === sandboxId)).toEqual([]);
    const sandbox = await reply;
    expect(warm.warmIdOf(sandboxId)).toBeDefined();
    expect(sandbox.status.state).toBe('STATE_RUNNING');
    expect(sandbox.status.startTime).toBeDefined();
    // ...and by the reply, the one event of its last state (PENDING and CREATING are superseded).
    const mine = events.filter((e) => e.sandboxId === sandboxId);
    expect(mine.map((e) => e.state)).toEqual(['STATE_RUNNING']);
    expect(mine[0]?.sequence).toBeGreaterThan(0);
    // Later changes are published as they happen.
    service.delete({ sandboxId, organizationId: 'org-1', gracePeriodSeconds: 0 });
    expect(events.filter((e) => e.sandboxId === sandboxId).map((e) => e.state)).toEqual(['STATE_RUNNING', 'STATE_TERMINATING']);
  });

  it('publishes a cold create\'s states as they happen (nothing held)', async () => {
    await setup(1);
    const sandboxId = `sb-${n++}`;
    const reply = service.create({ sandboxId, organizationId: 'org-1', spec: { ...matching, containers: [{ name: 'main', image: 'local', resources: { cpu: '2', memory: '256Mi' } }] } });
    expect(events.filter((e) => e.sandboxId === sandboxId).map((e) => e.state)).toEqual(['STATE_PENDING']);
    await reply;
    expect(warm.warmIdOf(sandboxId)).toBeUndefined();
    expect(warm.coldLaunches).toBe(1);
  });
});

import { cgroupValue, destroyBackend, launchRunning, makeBackend, spec, type TestBackend } from './helpers';

/** CPU usage of the sandbox's cpuacct cgroup, in seconds. */
function usageS(t: TestBackend, id: string): number {
  return Number(cgroupValue(t, id, 'cpuacct', 'cpuacct.usage')) / 1e9;
}

function statOf(t: TestBackend, id: string, key: string): number {
  return Number(new RegExp(`^${key} (\\d+)$`, 'm').exec(cgroupValue(t, id, 'cpu', 'cpu.stat'))?.[1]);
}

/**
 * The CFS burst lets a small sandbox spend quota it left unused (so a few execs after idling are
 * not held to the next period), while its average CPU stays at its limit.
 */
describe('local backend: CPU quota with a burst', () => {
  let t: TestBackend;
  beforeAll(async () => {
    t = makeBackend();
    await launchRunning(t, spec('small', { cpuMillis: 100 }));
  });
  afterAll(async () => {
    const left = await destroyBackend(t);
    expect(left).toEqual({ leftoverProcesses: [], leftoverCgroups: [] });
  });

  it('a 100m sandbox runs on 10 ms per 100 ms with a burst of one more quota', () => {
    expect(cgroupValue(t, 'small', 'cpu', 'cpu.cfs_period_us')).toBe('100000');
    expect(cgroupValue(t, 'small', 'cpu', 'cpu.cfs_quota_us')).toBe('10000');
    expect(cgroupValue(t, 'small', 'cpu', 'cpu.cfs_burst_us')).toBe('10000');
  });

  it('after idling, a sandbox spends its saved quota in a burst', async () => {
    const bursts0 = statOf(t, 'small', 'nr_bursts');
    // Idle long enough to fill the burst, then ~15 ms of CPU at once: more than one period's 10 ms.
    await new Promise((r) => setTimeout(r, 300));
    const r = await t.backend.exec('small', { argv: ['python3', '-c', 'import time\nt=time.process_time()\nwhile time.process_time()-t<0.015: pass'] });
    expect(r.exitCode).toBe(0);
    expect(statOf(t, 'small', 'nr_bursts')).toBeGreaterThan(bursts0);
  }, 30_000);

  it('a busy loop in a 100m sandbox still gets about 10 % of a CPU over seconds', async () => {
    const throttled0 = statOf(t, 'small', 'nr_throttled');
    const u0 = usageS(t, 'small');
    const t0 = Date.now();
    // Two busy loops want two CPUs; the quota holds them to 0.1 together.
    const r = await t.backend.exec('small', { argv: ['sh', '-c', 'while :; do :; done & while :; do :; done'], timeoutMs: 2000 });
    const wallS = (Date.now() - t0) / 1000;
    const cpuS = usageS(t, 'small') - u0;
    expect(r.timedOut).toBe(true);
    expect(wallS).toBeGreaterThanOrEqual(2);
    // At most the limit plus one burst (10 ms) over the whole run, with 1 % of a CPU for the
    // exec's own start and the timeout's kill.
    expect(cpuS / wallS).toBeLessThan(0.1 + 0.01 / wallS + 0.01);
    // The loops were held to the quota, not starved by the machine's other load.
    expect(statOf(t, 'small', 'nr_throttled') - throttled0).toBeGreaterThanOrEqual(10);
    expect(cpuS / wallS).toBeGreaterThan(0.05);
  }, 30_000);
});

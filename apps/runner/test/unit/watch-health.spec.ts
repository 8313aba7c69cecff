import { WatchHealth } from '../../src/backend/kubernetes/kubernetes-backend';

describe('WatchHealth (the kubernetes backend pod watch)', () => {
  it('backs off exponentially with jitter up to 30 s, reports why it is down, and resets only after a stable watch', () => {
    let now = 0;
    const h = new WatchHealth(() => now, () => 1);
    expect(h.degraded()).toBeUndefined();
    const delays = Array.from({ length: 8 }, () => h.down(new Error('connect ECONNREFUSED')));
    expect(delays).toEqual([500, 1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    now = 12_000;
    expect(h.degraded()).toBe('the pod watch is down for 12s (8 failed attempts, retrying with backoff): connect ECONNREFUSED');
    // Reconnected, then failed again at once (the relist after a connect): the backoff goes on.
    h.up();
    expect(h.degraded()).toBeUndefined();
    expect(h.down(new Error('list 500'))).toBe(30000);
    // Up for longer than the longest delay: the next failure starts from the base again.
    h.up();
    now += 31_000;
    expect(h.down(new Error('watch closed'))).toBe(500);
    const half = new WatchHealth(() => 0, () => 0);
    expect(half.down('x')).toBe(250);
  });
});

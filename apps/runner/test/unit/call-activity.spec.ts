import { describe, expect, it } from 'vitest';
import { CallActivity } from '../../src/backend/local/call-activity';

describe('CallActivity', () => {
  it('is quiet only with no call in flight and none for the quiet period', () => {
    let now = 1_000;
    const a = new CallActivity(200, 2_000, () => now);
    expect(a.waitMs()).toBe(0);
    const end = a.begin();
    now += 500;
    expect(a.waitMs()).toBe(200);
    end();
    end(); // ending twice counts once
    now += 50;
    expect(a.waitMs()).toBe(150);
    now += 150;
    expect(a.waitMs()).toBe(0);
    const end2 = a.begin();
    expect(a.waitMs()).toBe(200);
    end2();
    now += 200;
    expect(a.waitMs()).toBe(0);
  });

  it('stops waiting after the bound even while calls keep coming, and when told to stop', async () => {
    const a = new CallActivity(20, 60);
    a.begin(); // never ends
    const t0 = performance.now();
    await a.quiet();
    const waited = performance.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(55);
    expect(waited).toBeLessThan(1_000);
    const t1 = performance.now();
    await a.quiet(() => true);
    expect(performance.now() - t1).toBeLessThan(20);
  });

  it('resolves once the calls pause', async () => {
    const a = new CallActivity(30, 5_000);
    const end = a.begin();
    setTimeout(end, 40);
    const t0 = performance.now();
    await a.quiet();
    const waited = performance.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(60);
    expect(waited).toBeLessThan(2_000);
  });
});

import { httpJson } from '@paddock/testing';
import { capacityRefusal } from '../src/sandboxes/capacity-refusal';
import { specWith, useCluster } from './support/cluster';

/**
 * A create refused for capacity tells the user what is full, what of theirs holds it, and how to
 * free it: a newcomer whose sandboxes pile up must not get a bare "at capacity".
 */
describe('capacity refusals', () => {
  const cluster = useCluster({ runnerIds: ['r-small'], sandboxCapacity: { 'r-small': 2 } });

  it('names the full runner, its own words, the caller\'s live sandboxes there (oldest first), and the commands that free them', async () => {
    const c = cluster();
    const create = (): Promise<{ status: number; json: { sandboxId?: string; code?: string; message?: string; details?: { reason?: string }[] } }> =>
      httpJson(c.gw.url, 'POST', '/v1/sandboxes', c.token, { spec: specWith('100m', '64Mi') });
    const first = await create();
    const second = await create();
    expect([first.status, second.status]).toEqual([200, 200]);
    const refused = await create();
    expect(refused.status).toBe(429);
    expect(refused.json.code).toBe('resource_exhausted');
    expect(refused.json.details?.some((d) => d.reason === 'CWSANDBOX_RUNNER_AT_CAPACITY')).toBe(true);
    const message = refused.json.message ?? '';
    expect(message).toContain('runner r-small: 2/2 sandboxes');
    expect(message).toContain('your organization has 2 live sandboxes there, oldest');
    expect(message.indexOf(first.json.sandboxId ?? '?')).toBeGreaterThan(0);
    expect(message.indexOf(first.json.sandboxId ?? '?')).toBeLessThan(message.indexOf(second.json.sandboxId ?? '?'));
    expect(message).toContain('`cwic sandbox stop ID`');
    expect(message).toContain('`cwic sandbox run`');
  });
});

describe('capacityRefusal', () => {
  it('says when nothing of the caller holds the capacity, and shows at most three oldest sandboxes', () => {
    const now = new Date('2026-12-01T12:00:00Z');
    const none = capacityRefusal([{ runnerId: 'r1', message: 'runner is at capacity: 2000m CPU wanted, 0m free; retry later or on another runner' }], [], now);
    expect(none.message).toBe("every suitable runner is at capacity: runner r1: 2000m CPU wanted, 0m free; none of it is held by your organization's sandboxes. Retry later, or ask an admin for more capacity.");
    const held = [0, 1, 2, 3].map((i) => ({ id: `sb-${i}`, runner_id: 'r1', create_time: new Date(now.getTime() - (40 - i) * 60_000) }));
    const many = capacityRefusal([{ runnerId: 'r1', message: 'runner is at capacity: 4/4 sandboxes; retry later or on another runner' }], held, now);
    expect(many.message).toContain('runner r1: 4/4 sandboxes; your organization has 4 live sandboxes there, oldest sb-0 (40m old), sb-1 (39m old), sb-2 (38m old). Free capacity with');
    expect(many.message).not.toContain('sb-3');
  });
});

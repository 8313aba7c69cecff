import { SANDBOX_STATE_RANK } from '@paddock/contracts';
import { CreatesInFlight, type HeldEvent } from '../src/sandboxes/creates-in-flight';

describe('CreatesInFlight: state events of a create in flight wait for it', () => {
  const outcome: string[] = [];
  const event = (
    name: 'STATE_PENDING' | 'STATE_CREATING' | 'STATE_RUNNING' | 'STATE_FAILED',
    sequence: number,
  ): HeldEvent => ({
    rank: SANDBOX_STATE_RANK[name],
    sequence,
    apply: () => void outcome.push(`applied ${name}`),
    skip: () => void outcome.push(`skipped ${name}`),
  });
  beforeEach(() => void outcome.splice(0));

  it('holds the events of a create in flight and applies them in arrival order when it settles', () => {
    const creates = new CreatesInFlight();
    creates.begin('sb-1');
    expect(creates.hold('sb-1', event('STATE_PENDING', 1))).toBe(true);
    expect(creates.hold('sb-1', event('STATE_CREATING', 2))).toBe(true);
    expect(creates.hold('sb-1', event('STATE_RUNNING', 3))).toBe(true);
    expect(outcome).toEqual([]);
    // No accepted row to compare with (the create was refused or left to the reconciler): all go.
    creates.end('sb-1');
    expect(outcome).toEqual([
      'applied STATE_PENDING',
      'applied STATE_CREATING',
      'applied STATE_RUNNING',
    ]);
    expect(creates.size).toBe(0);
  });

  it('drops at the end exactly the events the accepted row outranks, and keeps a newer one', () => {
    const creates = new CreatesInFlight();
    creates.begin('sb-1');
    for (const e of [
      event('STATE_PENDING', 1),
      event('STATE_CREATING', 2),
      event('STATE_RUNNING', 3),
    ]) {
      creates.hold('sb-1', e);
    }
    // A warm take's reply: RUNNING, with no event sequence.
    creates.settle('sb-1', { rank: SANDBOX_STATE_RANK.STATE_RUNNING, sequence: 0 });
    creates.end('sb-1');
    expect(outcome).toEqual([
      'skipped STATE_PENDING',
      'skipped STATE_CREATING',
      'applied STATE_RUNNING',
    ]);

    outcome.splice(0);
    creates.begin('sb-2');
    creates.hold('sb-2', event('STATE_RUNNING', 7));
    creates.hold('sb-2', event('STATE_FAILED', 8));
    creates.settle('sb-2', { rank: SANDBOX_STATE_RANK.STATE_RUNNING, sequence: 7 });
    creates.end('sb-2');
    expect(outcome).toEqual(['skipped STATE_RUNNING', 'applied STATE_FAILED']);

    outcome.splice(0);
    creates.begin('sb-3');
    creates.hold('sb-3', event('STATE_FAILED', 9));
    creates.settle('sb-3', { rank: SANDBOX_STATE_RANK.STATE_FAILED, sequence: 0 });
    creates.end('sb-3');
    expect(outcome).toEqual(['skipped STATE_FAILED']);
  });

  it('holds nothing for a sandbox whose create is not in flight (before, after, or another gateway’s)', () => {
    const creates = new CreatesInFlight();
    expect(creates.hold('sb-1', event('STATE_PENDING', 1))).toBe(false);
    creates.begin('sb-1');
    expect(creates.hold('sb-2', event('STATE_PENDING', 1))).toBe(false);
    creates.end('sb-1');
    expect(creates.hold('sb-1', event('STATE_PENDING', 1))).toBe(false);
    creates.begin('sb-3');
    creates.hold('sb-3', event('STATE_CREATING', 1));
    creates.end('sb-3');
    // A second end applies nothing twice.
    creates.end('sb-3');
    expect(outcome).toEqual(['applied STATE_CREATING']);
  });
});

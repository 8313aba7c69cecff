import type { SandboxStateEvent } from '@paddock/contracts';
import { CreatesInFlight, foldHeld } from '../src/sandboxes/creates-in-flight';
import type { RunnerObservation } from '../src/sandboxes/sandbox.repository';

const event = (state: SandboxStateEvent['state'], sequence: number, extra: Partial<SandboxStateEvent> = {}): SandboxStateEvent => ({
  sandboxId: 'sb-1',
  organizationId: 'org',
  runnerId: 'r-1',
  state,
  at: new Date(1_000 + sequence).toISOString(),
  sequence,
  ...extra,
});

/** A warm take's reply: CREATING, the launch's echoes, no sequence. */
const reply = (): RunnerObservation => ({
  state: 'STATE_CREATING',
  rank: 1,
  sequence: 0,
  at: new Date(500),
  effective: { effectiveRuntimeClass: 'rc', containerStatuses: [{ name: 'main', state: 'waiting', restartCount: 0 }] },
});

describe('foldHeld (a create reply and the events that came before it, as one write)', () => {
  it('a take answered CREATING whose RUNNING event is in says RUNNING, with the event sequence, start time and containers', () => {
    const running = [{ name: 'main', state: 'running' as const, restartCount: 0 }];
    const { observation, others } = foldHeld(
      [event('STATE_PENDING', 10), event('STATE_CREATING', 20), event('STATE_RUNNING', 30, { containerStatuses: running })],
      'r-1',
      reply(),
    );
    expect(others).toEqual([]);
    expect(observation).toMatchObject({ state: 'STATE_RUNNING', rank: 2, sequence: 30, at: new Date(1_030) });
    // The launch's echoes stay; the event's containers replace the reply's, as the event UPDATE merges them.
    expect(observation.effective).toEqual({ effectiveRuntimeClass: 'rc', containerStatuses: running });
  });

  it('events the reply already supersedes change nothing (a RUNNING reply keeps its start time and echoes)', () => {
    const r: RunnerObservation = { ...reply(), state: 'STATE_RUNNING', rank: 2, at: new Date(700) };
    const { observation } = foldHeld([event('STATE_CREATING', 20), event('STATE_RUNNING', 30)], 'r-1', r);
    // The RUNNING event has a sequence the reply lacks: taken, the first RUNNING time kept.
    expect(observation).toMatchObject({ state: 'STATE_RUNNING', sequence: 30, at: new Date(700) });
    expect(observation.effective).toEqual(r.effective);
  });

  it('a terminal event wins with its reason and exit code; nothing moves a terminal state afterwards', () => {
    const { observation } = foldHeld(
      [event('STATE_RUNNING', 30), event('STATE_FAILED', 40, { reason: 'EXITED', exitCode: 3, message: 'boom' }), event('STATE_RUNNING', 50)],
      'r-1',
      reply(),
    );
    expect(observation).toMatchObject({ state: 'STATE_FAILED', reason: 'EXITED', exitCode: 3, message: 'boom', sequence: 40 });
  });

  it('same rank: only a newer sequence wins (a late RUNNING after PAUSED is stale); RUNNING clears a paused reason', () => {
    const paused = foldHeld([event('STATE_RUNNING', 30), event('STATE_PAUSED', 40, { reason: 'PAUSED_BY_USER' }), event('STATE_RUNNING', 35)], 'r-1', reply());
    expect(paused.observation).toMatchObject({ state: 'STATE_PAUSED', reason: 'PAUSED_BY_USER', sequence: 40 });
    const resumed = foldHeld([event('STATE_PAUSED', 40, { reason: 'PAUSED_BY_USER' }), event('STATE_RUNNING', 45)], 'r-1', reply());
    expect(resumed.observation.state).toBe('STATE_RUNNING');
    expect(resumed.observation.reason).toBeUndefined();
  });

  it("another runner's events are not folded: they go to the usual write", () => {
    const foreign = event('STATE_RUNNING', 30, { runnerId: 'r-2' });
    const { observation, others } = foldHeld([foreign], 'r-1', reply());
    expect(others).toEqual([foreign]);
    expect(observation).toEqual(reply());
  });
});

describe('CreatesInFlight', () => {
  it("holds a sandbox's events from begin to end only, in arrival order", () => {
    const c = new CreatesInFlight();
    expect(c.hold(event('STATE_PENDING', 1))).toBe(false);
    c.begin('sb-1');
    expect(c.hold(event('STATE_CREATING', 2))).toBe(true);
    expect(c.hold(event('STATE_RUNNING', 3))).toBe(true);
    expect(c.hold({ ...event('STATE_RUNNING', 3), sandboxId: 'other' })).toBe(false);
    expect(c.end('sb-1').map((e) => e.sequence)).toEqual([2, 3]);
    expect(c.hold(event('STATE_RUNNING', 4))).toBe(false);
    expect(c.end('sb-1')).toEqual([]);
  });

  it('an event ranked below an accepted row is stale, while the rank is remembered', () => {
    let now = 0;
    const c = new CreatesInFlight(() => now);
    expect(c.belowKnownRank(event('STATE_CREATING', 2))).toBe(false);
    c.noteRank('sb-1', 2);
    expect(c.belowKnownRank(event('STATE_CREATING', 2))).toBe(true);
    // Same rank or above: the database decides (sequence, terminal), never this.
    expect(c.belowKnownRank(event('STATE_PAUSED', 5))).toBe(false);
    expect(c.belowKnownRank(event('STATE_COMPLETED', 6))).toBe(false);
    now += 60_000;
    expect(c.belowKnownRank(event('STATE_CREATING', 2))).toBe(false);
  });
});

import { insideWindow, lastWindowStart, mayStartUpdate } from '../../src/modules/maintenance/maintenance-window';

const at = (iso: string): Date => new Date(iso);
const saturdayNine = { cron: '0 9 * * SAT', durationSeconds: 4 * 3600 };

describe('maintenance windows (UTC cron + duration)', () => {
  it('a window is open from its cron start (inclusive) for durationSeconds (end exclusive)', () => {
    // 2026-11-28 is a Saturday.
    expect(insideWindow(saturdayNine, at('2026-11-28T08:59:59.999Z'))).toBeUndefined();
    expect(insideWindow(saturdayNine, at('2026-11-28T09:00:00.000Z'))).toEqual(at('2026-11-28T09:00:00Z'));
    expect(insideWindow(saturdayNine, at('2026-11-28T12:59:59.999Z'))).toEqual(at('2026-11-28T09:00:00Z'));
    expect(insideWindow(saturdayNine, at('2026-11-28T13:00:00.000Z'))).toBeUndefined();
    expect(insideWindow(saturdayNine, at('2026-11-27T10:00:00Z'))).toBeUndefined();
  });

  it('evaluates in UTC with no DST shift (Europe switches to winter time on 2026-10-25)', () => {
    const daily = { cron: '0 2 * * *', durationSeconds: 3600 };
    for (const day of ['2026-10-24', '2026-10-25', '2026-10-26', '2026-03-29']) {
      expect(lastWindowStart(daily.cron, at(`${day}T02:30:00Z`))).toEqual(at(`${day}T02:00:00Z`));
      expect(insideWindow(daily, at(`${day}T02:59:59Z`))).toBeTruthy();
      expect(insideWindow(daily, at(`${day}T03:00:00Z`))).toBeUndefined();
    }
  });

  it('a window that spans midnight and the week boundary stays open across it', () => {
    const sundayNight = { cron: '0 22 * * SUN', durationSeconds: 6 * 3600 };
    expect(insideWindow(sundayNight, at('2026-11-30T03:59:00Z'))).toEqual(at('2026-11-29T22:00:00Z'));
    expect(insideWindow(sundayNight, at('2026-11-30T04:00:00Z'))).toBeUndefined();
  });

  it('an invalid cron never opens', () => {
    expect(insideWindow({ cron: '61 * * * *', durationSeconds: 604800 }, at('2026-11-28T10:00:00Z'))).toBeUndefined();
  });
});

describe('mayStartUpdate', () => {
  const exclusion = { startTime: '2026-11-28T10:00:00Z', endTime: '2026-11-28T11:00:00Z', reason: 'launch' };

  it('allows an update to start only inside a window', () => {
    expect(mayStartUpdate({ windows: [saturdayNine], exclusions: [] }, at('2026-11-28T09:30:00Z'))).toMatchObject({ allowed: true, reason: 'inside_window' });
    expect(mayStartUpdate({ windows: [saturdayNine], exclusions: [] }, at('2026-11-27T09:30:00Z'))).toEqual({ allowed: false, reason: 'outside_windows' });
  });

  it('any of several windows suffices', () => {
    const policy = { windows: [saturdayNine, { cron: '30 1 * * WED', durationSeconds: 600 }], exclusions: [] };
    expect(mayStartUpdate(policy, at('2026-11-25T01:35:00Z')).allowed).toBe(true);
    expect(mayStartUpdate(policy, at('2026-11-25T01:40:00Z')).allowed).toBe(false);
  });

  it('exclusions win over windows: start inclusive, end exclusive', () => {
    const policy = { windows: [saturdayNine], exclusions: [exclusion] };
    expect(mayStartUpdate(policy, at('2026-11-28T09:59:59Z')).allowed).toBe(true);
    expect(mayStartUpdate(policy, at('2026-11-28T10:00:00Z'))).toEqual({ allowed: false, reason: 'excluded' });
    expect(mayStartUpdate(policy, at('2026-11-28T10:59:59Z'))).toEqual({ allowed: false, reason: 'excluded' });
    expect(mayStartUpdate(policy, at('2026-11-28T11:00:00Z')).allowed).toBe(true);
  });

  it('with no windows, any time outside exclusions (also for a missing policy)', () => {
    expect(mayStartUpdate({ windows: [], exclusions: [] }, at('2026-11-25T15:00:00Z'))).toEqual({ allowed: true, reason: 'no_windows' });
    expect(mayStartUpdate(undefined, at('2026-11-25T15:00:00Z')).allowed).toBe(true);
    expect(mayStartUpdate({ windows: [], exclusions: [exclusion] }, at('2026-11-28T10:30:00Z'))).toEqual({ allowed: false, reason: 'excluded' });
  });

  it('exclusions with offsets are compared as instants', () => {
    const policy = { windows: [], exclusions: [{ startTime: '2026-11-28T11:00:00+01:00', endTime: '2026-11-28T12:00:00+01:00' }] };
    expect(mayStartUpdate(policy, at('2026-11-28T10:30:00Z')).allowed).toBe(false);
    expect(mayStartUpdate(policy, at('2026-11-28T11:00:00Z')).allowed).toBe(true);
  });
});

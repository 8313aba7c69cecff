import { Cron } from 'croner';

export interface MaintenanceWindow {
  /** 5-field cron, evaluated in UTC: when a window opens. */
  cron: string;
  durationSeconds: number;
}

export interface MaintenanceExclusion {
  /** RFC 3339, inclusive. */
  startTime: string;
  /** RFC 3339, exclusive. */
  endTime: string;
  reason?: string;
}

export interface MaintenancePolicy {
  windows?: readonly MaintenanceWindow[];
  exclusions?: readonly MaintenanceExclusion[];
}

export type UpdateStartVerdict =
  | { allowed: true; reason: 'inside_window' | 'no_windows'; windowStart?: Date }
  | { allowed: false; reason: 'excluded' | 'outside_windows' };

/**
 * The most recent opening of `cron` at or before `at`, in UTC (no DST: UTC has none).
 * Invalid patterns never open. croner works at whole seconds and returns runs strictly before
 * its reference, so the reference is the next whole second after `at`.
 */
export function lastWindowStart(cron: string, at: Date): Date | undefined {
  let pattern: Cron;
  try {
    pattern = new Cron(cron, { timezone: 'Etc/UTC', paused: true });
  } catch {
    return undefined;
  }
  const reference = new Date(Math.floor(at.getTime() / 1000) * 1000 + 1000);
  return pattern.previousRuns(1, reference)[0] ?? undefined;
}

/** True when `at` lies in [start, start + duration) of the window's latest opening. */
export function insideWindow(window: MaintenanceWindow, at: Date): Date | undefined {
  const start = lastWindowStart(window.cron, at);
  if (!start) return undefined;
  return at.getTime() - start.getTime() < window.durationSeconds * 1000 ? start : undefined;
}

export function insideExclusion(exclusion: MaintenanceExclusion, at: Date): boolean {
  const start = Date.parse(exclusion.startTime);
  const end = Date.parse(exclusion.endTime);
  if (Number.isNaN(start) || Number.isNaN(end)) return false;
  return at.getTime() >= start && at.getTime() < end;
}

/**
 * Whether an automatic update may START at `at`: never inside an exclusion
 * (exclusions win); otherwise inside any window, or at any time when there are no windows.
 */
export function mayStartUpdate(policy: MaintenancePolicy | null | undefined, at: Date): UpdateStartVerdict {
  if ((policy?.exclusions ?? []).some((e) => insideExclusion(e, at))) return { allowed: false, reason: 'excluded' };
  const windows = policy?.windows ?? [];
  if (windows.length === 0) return { allowed: true, reason: 'no_windows' };
  for (const w of windows) {
    const start = insideWindow(w, at);
    if (start) return { allowed: true, reason: 'inside_window', windowStart: start };
  }
  return { allowed: false, reason: 'outside_windows' };
}

import type { ManagedRunner } from '@paddock/contracts';
import { ApiError } from '../api/client';
import type { Logger } from '../log';

/**
 * Destroy waits for the controller's teardown: deleting a runner only starts its decommission
 * (status DELETING), and the API answers not found once the controller reported the runner
 * gone. The wait polls the runner, quickly at first then every 2 s, reports progress in the
 * provider log, and gives up after 30 minutes, leaving the runner in state.
 */
export const TEARDOWN_TIMEOUT_MS = 30 * 60_000;
const POLL_MS = [500, 1000, 2000];
const PROGRESS_EVERY_MS = 30_000;

export interface TeardownDeps {
  getRunner(ref: string): Promise<ManagedRunner | null>;
  now(): number;
  sleep(ms: number): Promise<void>;
  log: Logger;
  /** Set when Terraform asks the provider to stop. */
  stopped(): boolean;
}

export type TeardownResult = { gone: true; waitedMs: number } | { gone: false; waitedMs: number; reason: 'timeout' | 'stopped'; lastStatus: string };

/** Errors that say the API is briefly unavailable rather than that the wait is pointless. */
const transient = (e: unknown): boolean =>
  e instanceof ApiError && (e.kind === 'unreachable' || e.kind === 'timeout' || (e.details.status !== undefined && e.details.status >= 500));

export function showDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${s % 60}s` : `${s}s`;
}

export async function waitForTeardown(runnerId: string, deps: TeardownDeps, timeoutMs = TEARDOWN_TIMEOUT_MS): Promise<TeardownResult> {
  const start = deps.now();
  let lastStatus = 'RUNNER_INSTALL_STATUS_DELETING';
  let lastReport = start;
  for (let poll = 0; ; poll++) {
    const waitedMs = deps.now() - start;
    if (deps.stopped()) return { gone: false, waitedMs, reason: 'stopped', lastStatus };
    let runner: ManagedRunner | null | undefined;
    try {
      runner = await deps.getRunner(runnerId);
    } catch (e) {
      if (!transient(e)) throw e;
      deps.log.log('warn', `Waiting for runner ${runnerId} teardown: the API did not answer (${e instanceof Error ? e.message : String(e)}); retrying`);
    }
    if (runner === null) {
      deps.log.log('info', `Runner ${runnerId} is gone after ${showDuration(deps.now() - start)}`);
      return { gone: true, waitedMs: deps.now() - start };
    }
    if (runner) {
      const status = runner.installStatus;
      if (status !== lastStatus || deps.now() - lastReport >= PROGRESS_EVERY_MS || poll === 0) {
        deps.log.log('info', `Waiting for the controller to tear down runner ${runnerId}: install status ${status}, ${showDuration(deps.now() - start)} elapsed (gives up after ${showDuration(timeoutMs)})`);
        lastReport = deps.now();
      }
      lastStatus = status;
    }
    if (deps.now() - start >= timeoutMs) return { gone: false, waitedMs: deps.now() - start, reason: 'timeout', lastStatus };
    await deps.sleep(Math.min(POLL_MS[poll] ?? 2000, Math.max(0, timeoutMs - (deps.now() - start))));
  }
}

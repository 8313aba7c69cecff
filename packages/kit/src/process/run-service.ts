import { exitOnInvalidEnvironment, InvalidEnvironmentError } from '../config/environment';
import type { ServiceLogger } from '../log/service-logger';

/** What a started service hands back: how to stop it (drain, close, let go of what it holds). */
export interface RunningService {
  stop(): Promise<void>;
}

export interface ServiceMain {
  /** The logger to write with now (a service replaces its start-up logger once it has read its configuration). */
  log: () => ServiceLogger;
  /** Reads the configuration and starts; `signal` aborts when a stop signal arrives during start-up. */
  start: (signal: AbortSignal) => Promise<RunningService>;
  /** A stop that takes longer than this exits 1 (a stuck drain must not keep the process alive). */
  stopDeadlineMs?: number;
}

const describe = (e: unknown): string => (e instanceof Error ? (e.stack ?? e.message) : String(e));

/**
 * The one process shape of every Paddock service: signal handlers in place before anything
 * starts, so SIGTERM/SIGINT during start-up is a clean exit 0 too; a bad environment exits 2
 * naming every variable; a start failure exits 1; a stop exits 0 once the service has stopped.
 */
export function runService(name: string, main: ServiceMain): void {
  const aborter = new AbortController();
  let running: RunningService | undefined;
  let stopping = false;
  const stopped = (): void => process.exit(0);
  const failed = (msg: string, e?: unknown): never => {
    main.log().fatal(msg, e === undefined ? {} : { error: describe(e) });
    process.exit(1);
  };
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    main.log().info(`${name} stopping`, { signal });
    aborter.abort(new Error(`stopped by ${signal}`));
    setTimeout(() => failed(`${name} did not stop in time`), main.stopDeadlineMs ?? 15_000).unref();
    // Still starting: the start-up below sees `stopping` and stops what it started.
    running?.stop().then(stopped, (e: unknown) => failed(`${name} stop failed`, e));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  main.start(aborter.signal).then(
    (service) => {
      running = service;
      if (stopping) service.stop().then(stopped, (e: unknown) => failed(`${name} stop failed`, e));
    },
    (e: unknown) => {
      if (e instanceof InvalidEnvironmentError) exitOnInvalidEnvironment(main.log(), e);
      if (stopping) stopped();
      failed(`${name} failed to start`, e);
    },
  );
}

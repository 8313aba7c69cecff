import { createServiceLogger, exitOnInvalidEnvironment, InvalidEnvironmentError } from '@paddock/kit';
import { parseEnv, type ControllerEnv } from './config';
import type { ControllerHandle } from './controller';

const STOP_DEADLINE_MS = 15_000;
const log = createServiceLogger({ service: 'controller' });

function fail(msg: string): never {
  log.fatal(msg);
  process.exit(1);
}

/**
 * `node apps/controller/dist/main.js`: starts the controller (local driver by default), waiting
 * for the control plane with backoff if it is not up yet; SIGTERM/SIGINT stop it cleanly (exit 0),
 * including while it is still waiting.
 */
async function main(): Promise<void> {
  let env: ControllerEnv;
  try {
    env = parseEnv(process.env);
  } catch (e) {
    if (e instanceof InvalidEnvironmentError) exitOnInvalidEnvironment(log, e);
    fail(e instanceof Error ? e.message : String(e));
  }
  const aborter = new AbortController();
  // Set once started; read by the signal handler.
  const running: { handle?: ControllerHandle } = {};
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    aborter.abort(new Error('stopped by signal'));
    // A stuck drain must not keep the process alive forever.
    setTimeout(() => fail('controller did not stop in time'), STOP_DEADLINE_MS).unref();
    if (!running.handle) return; // start-up is aborted; main() exits below
    running.handle.stop().then(
      () => process.exit(0),
      (e: unknown) => fail(`controller stop failed: ${e instanceof Error ? e.message : String(e)}`),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  let started: ControllerHandle;
  try {
    // Loaded after the signal handlers are in place: @kubernetes/client-node takes seconds to load
    // on a busy machine, and a SIGTERM in that window must still be a clean exit.
    const { startController } = await import('./controller.js');
    if (stopping) process.exit(0);
    started = await startController(env, { signal: aborter.signal });
  } catch (e) {
    if (stopping) process.exit(0);
    throw e;
  }
  running.handle = started;
  if (stopping) {
    await started.stop();
    process.exit(0);
  }
}

main().catch((e: unknown) => fail(`controller failed to start: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`));

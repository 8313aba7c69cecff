import { createServiceLogger, runService } from '@paddock/kit';
import { parseEnv } from './config';

const log = createServiceLogger({ service: 'controller' });

/**
 * `node apps/controller/dist/main.js`: starts the controller (local driver by default), waiting
 * for the control plane with backoff if it is not up yet; SIGTERM/SIGINT stop it cleanly (exit 0),
 * including while it is still waiting.
 */
runService('controller', {
  log: () => log,
  async start(signal) {
    const env = parseEnv(process.env);
    // Loaded once the signal handlers are in place: @kubernetes/client-node takes seconds to load
    // on a busy machine, and a SIGTERM in that window must still be a clean exit.
    const { startController } = await import('./controller.js');
    return startController(env, { signal });
  },
});

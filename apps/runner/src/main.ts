import { InvalidEnvironmentError, runService, type ServiceLogger } from '@paddock/kit';
import { parseRunnerEnv } from './config/env';
import { initialConfigFile, natsSettings, optionsFromEnv } from './config/options';
import { createBackend } from './backend/create-backend';
import { decommission } from './decommission';
import { runnerLogger, startRunner } from './runner';

// Until the environment is read, at the default level.
let log: ServiceLogger = runnerLogger();

/**
 * `node dist/main.js`: parse the environment (exit 2 with every bad variable), build the backend,
 * start. SIGTERM/SIGINT stop heartbeats and drain NATS; sandboxes keep running and the next runner
 * process adopts them.
 */
runService('runner', {
  log: () => log,
  async start() {
    const parsed = parseRunnerEnv(process.env);
    if (!parsed.ok) throw new InvalidEnvironmentError(parsed.message, parsed.errors);
    log = runnerLogger(parsed.env.LOG_LEVEL, parsed.env.LOG_FORMAT);
    if (parsed.env.PADDOCK_RUNNER_MODE === 'decommission') {
      const file = await initialConfigFile(parsed.env);
      const runnerId = parsed.env.PADDOCK_RUNNER_ID ?? file?.runnerId;
      if (!runnerId) {
        log.fatal('decommission needs PADDOCK_RUNNER_ID (or runnerId in the config file)');
        process.exit(2);
      }
      const organizationId = parsed.env.PADDOCK_ORGANIZATION_ID ?? file?.identity.organizationId;
      const code = await decommission({
        backend: createBackend(parsed.env, runnerId),
        runnerId,
        ...(organizationId ? { organizationId } : {}),
        ...natsSettings(parsed.env, file),
        reason: parsed.env.PADDOCK_DECOMMISSION_REASON,
        log: log.info,
      });
      process.exit(code);
    }
    return startRunner(await optionsFromEnv(parsed.env, log));
  },
});

import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { RunnerModule } from './app.module';
import { parseRunnerEnv } from './config/env';
import { optionsFromEnv } from './config/options';
import { createBackend } from './backend/create-backend';
import { decommission } from './decommission';
import { consoleLogger } from './runner';

/**
 * `node dist/main.js`: parse the environment (exit 2 with every bad variable), build the backend,
 * start the Nest application context. SIGTERM/SIGINT stop heartbeats and drain NATS; sandboxes
 * keep running and the next runner process adopts them.
 */
async function main(): Promise<void> {
  const parsed = parseRunnerEnv(process.env);
  if (!parsed.ok) {
    process.stderr.write(`Invalid runner configuration:\n  ${parsed.errors.join('\n  ')}\n`);
    process.exit(2);
  }
  if (parsed.env.PADDOCK_RUNNER_MODE === 'decommission') {
    const runnerId = parsed.env.PADDOCK_RUNNER_ID;
    if (!runnerId) {
      process.stderr.write('decommission needs PADDOCK_RUNNER_ID\n');
      process.exit(2);
    }
    const code = await decommission({
      backend: createBackend(parsed.env, runnerId),
      runnerId,
      organizationId: parsed.env.PADDOCK_ORGANIZATION_ID,
      natsUrl: parsed.env.NATS_URL,
      reason: parsed.env.PADDOCK_DECOMMISSION_REASON,
      natsCredsFile: parsed.env.NATS_CREDS,
      log: (msg, fields) => consoleLogger.info(msg, fields),
    });
    process.exit(code);
  }
  const options = await optionsFromEnv(parsed.env);
  const app = await NestFactory.createApplicationContext(RunnerModule.forRoot(options), { logger: ['error', 'warn'] });
  app.enableShutdownHooks();
}

main().catch((e: unknown) => {
  process.stderr.write(`Runner failed to start: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});

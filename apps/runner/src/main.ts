import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { RunnerModule } from './app.module';
import { parseRunnerEnv } from './config/env';
import { optionsFromEnv } from './config/options';

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
  const options = await optionsFromEnv(parsed.env);
  const app = await NestFactory.createApplicationContext(RunnerModule.forRoot(options), { logger: ['error', 'warn'] });
  app.enableShutdownHooks();
}

main().catch((e: unknown) => {
  process.stderr.write(`Runner failed to start: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});

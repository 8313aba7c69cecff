import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { Logger } from '@nestjs/common';
import { AppConfig, parseEnv } from './config';
import { createControlPlane } from './control-plane';
import { exitOnInvalidEnvironment } from '@paddock/kit';
import { controlPlaneLogger } from './infrastructure/logger';

// Failures before the app's own logger exists, at the default level.
const early = controlPlaneLogger();

async function main(): Promise<void> {
  const parsed = parseEnv(process.env);
  if (!parsed.ok) {
    exitOnInvalidEnvironment(early, parsed);
  }
  const config = new AppConfig(parsed.env);
  const log = new Logger('Main');
  const cp = await createControlPlane({ config });
  cp.app.enableShutdownHooks();
  if (config.pageTokenSecretGenerated) {
    log.warn('PADDOCK_PAGE_TOKEN_SECRET is not set: list page tokens will not survive a restart');
  }
  if (cp.generatedAdminToken) {
    // Shown exactly once: only its hash is stored.
    process.stdout.write(`PADDOCK_ADMIN_TOKEN=${cp.generatedAdminToken}\n`);
    if (config.tokenFile) writeFileSync(config.tokenFile, `${cp.generatedAdminToken}\n`, { mode: 0o600 });
  }
  await cp.app.listen(config.port, config.host);
  log.log(`control plane listening on http://${config.host}:${config.port} (migrations applied: ${cp.migrationsApplied.length})`);
}

main().catch((e: unknown) => {
  early.fatal('control plane failed to start', { error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
  process.exit(1);
});

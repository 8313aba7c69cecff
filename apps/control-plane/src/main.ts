import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { Logger } from '@nestjs/common';
import { InvalidEnvironmentError, runService } from '@paddock/kit';
import { AppConfig, parseEnv } from './config';
import { createControlPlane } from './control-plane';
import { controlPlaneLogger } from './infrastructure/logger';

// Failures outside the Nest application (start-up, signals), at the default level.
const early = controlPlaneLogger();

runService('control plane', {
  log: () => early,
  async start() {
    const parsed = parseEnv(process.env);
    if (!parsed.ok) throw new InvalidEnvironmentError(parsed.message, parsed.errors);
    const config = new AppConfig(parsed.env);
    const log = new Logger('Main');
    const cp = await createControlPlane({ config });
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
    // Nest's shutdown hooks (NATS drain, pool end) run on close.
    return { stop: () => cp.app.close() };
  },
});

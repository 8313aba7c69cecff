import { createServiceLogger, exitOnInvalidEnvironment, InvalidEnvironmentError, type ServiceLogger } from '@paddock/kit';
import { createGateway, gatewayLogger } from './app';
import { parseGatewayEnv } from './config/env';

// Until the configuration is read, failures are logged at the default level.
let log: ServiceLogger = createServiceLogger({ service: 'gateway' });

async function main(): Promise<void> {
  const config = parseGatewayEnv(process.env);
  log = gatewayLogger(config);
  const gw = await createGateway(config, { log });
  log.info('gateway listening', { url: gw.url, port: config.port });
  log.info('gateway gRPC/Connect coreweave.sandbox.v1 listening', { url: gw.grpc.url, port: gw.grpc.port });
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info('draining', { signal });
    gw.close().then(
      () => process.exit(0),
      (e: unknown) => {
        log.error('shutdown failed', { error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main().catch((e: unknown) => {
  if (e instanceof InvalidEnvironmentError) exitOnInvalidEnvironment(log, e);
  log.fatal('gateway failed to start', { error: e instanceof Error ? e.message : String(e) });
  process.exit(1);
});

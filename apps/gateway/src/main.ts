import { createServiceLogger, runService, type ServiceLogger } from '@paddock/kit';
import { createGateway, gatewayLogger } from './app';
import { parseGatewayEnv } from './config/env';

// Until the configuration is read, failures are logged at the default level.
let log: ServiceLogger = createServiceLogger({ service: 'gateway' });

runService('gateway', {
  log: () => log,
  async start() {
    const config = parseGatewayEnv(process.env);
    log = gatewayLogger(config);
    const gw = await createGateway(config, { log });
    log.info('gateway listening', { url: gw.url, port: config.port });
    log.info('gateway gRPC/Connect coreweave.sandbox.v1 listening', { url: gw.grpc.url, port: gw.grpc.port });
    // Stop draining: no new work, open streams end, then the connections close.
    return { stop: () => gw.close() };
  },
});

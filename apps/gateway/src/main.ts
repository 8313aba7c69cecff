import { createGateway } from './app';
import { parseGatewayEnv } from './config/env';

async function main(): Promise<void> {
  const config = parseGatewayEnv(process.env);
  const gw = await createGateway(config);
  console.log(`[gateway] listening on ${gw.url} (port ${config.port})`);
  console.log(`[gateway] gRPC/Connect coreweave.sandbox.v1 on ${gw.grpc.url} (port ${gw.grpc.port})`);
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    console.log(`[gateway] ${signal}: draining`);
    gw.close().then(
      () => process.exit(0),
      (e: unknown) => {
        console.error('[gateway] shutdown failed', e);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main().catch((e: unknown) => {
  console.error('[gateway] failed to start:', e instanceof Error ? e.message : e);
  process.exit(1);
});

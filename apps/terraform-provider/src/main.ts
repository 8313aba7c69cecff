import { coreweaveProvider } from './provider';
import { createLogger } from './log';
import { checkHandshakeEnv } from './plugin/handshake';
import { servePlugin, type RunningPlugin } from './plugin/server';

/** terraform-provider-coreweave: started by Terraform, never by hand. */
async function main(): Promise<void> {
  const check = checkHandshakeEnv(process.env);
  if (!check.ok) {
    process.stderr.write(`${check.message}\n`);
    process.exit(1);
  }
  const log = createLogger();
  const provider = coreweaveProvider({ log, env: process.env });
  // Terraform relays Ctrl-C as StopProvider; the signal itself reaches the whole process group.
  process.on('SIGINT', () => log.log('debug', 'SIGINT ignored; Terraform sends StopProvider'));
  // Registered before serving: a SIGTERM right after the handshake must still remove the socket.
  const running: { plugin?: RunningPlugin; terminated?: boolean } = {};
  process.on('SIGTERM', () => {
    running.terminated = true;
    if (running.plugin) void running.plugin.close();
  });
  const plugin = await servePlugin(provider, { clientCertPem: check.clientCertPem, log, socketDir: process.env.PLUGIN_UNIX_SOCKET_DIR });
  running.plugin = plugin;
  if (running.terminated) await plugin.close();
  await plugin.closed;
  process.exit(0);
}

main().catch((e: unknown) => {
  process.stderr.write(`terraform-provider-coreweave failed to start: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});

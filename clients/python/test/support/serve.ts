/**
 * For working on the client by hand: starts the test platform, prints the variables to export,
 * and stops everything on Ctrl-C.
 *
 *   node --conditions=@paddock/source --import tsx clients/python/test/support/serve.ts
 */
import { startPythonPlatform } from './platform';

async function main(): Promise<void> {
  const started = await startPythonPlatform();
  for (const [k, v] of Object.entries(started.env)) process.stdout.write(`export ${k}=${v}\n`);
  process.stdout.write('# Ctrl-C (or SIGTERM) stops the platform\n');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await started.stop();
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});

import { parseEnv } from './config';
import { startController } from './controller';

async function main(): Promise<void> {
  let env;
  try {
    env = parseEnv(process.env);
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
  const handle = await startController(env);
  const stop = (): void => {
    void handle.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

void main().catch((e: unknown) => {
  process.stderr.write(`controller failed to start: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});

import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const APP_DIR = join(__dirname, '..', '..');

export interface RunnerProcess {
  child: ChildProcess;
  /** Everything the process logged so far (its JSON log lines on stdout, and stderr). */
  log(): string;
  /** SIGTERM, resolved once it has exited. */
  stop(): Promise<void>;
}

/** The runner as a separate process, as in production (`main.ts`, Nest application context), from source. */
export function spawnRunnerProcess(env: NodeJS.ProcessEnv): RunnerProcess {
  const child = spawn(process.execPath, ['--conditions=@paddock/source', '--import', 'tsx', 'src/main.ts'], {
    cwd: APP_DIR,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout?.on('data', (b: Buffer) => (log += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (log += b.toString()));
  return {
    child,
    log: () => log,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

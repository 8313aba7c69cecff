import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports';

export interface ThrowawayNats {
  readonly url: string;
  readonly port: number;
  /** SIGKILLs the server (a crash); JetStream data stays in its store directory. */
  kill(): Promise<void>;
  /** Starts the server again on the same port and store. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const NATS_BIN_CANDIDATES = ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'];

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => { s.destroy(); resolve(true); });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nats-server did not listen on ${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Starts a private nats-server with JetStream on a free loopback port. */
export async function startNats(opts: { port?: number; jetstream?: boolean } = {}): Promise<ThrowawayNats> {
  const bin = NATS_BIN_CANDIDATES.find((p) => existsSync(p));
  if (!bin) throw new Error('nats-server not found; apt-get install nats-server');
  const port = opts.port ?? (await freePort());
  const store = mkdtempSync(join(tmpdir(), 'paddock-nats-'));
  let child: ChildProcess | undefined;
  const launch = async (): Promise<void> => {
    const args = ['-a', '127.0.0.1', '-p', String(port)];
    if (opts.jetstream !== false) args.push('-js', '-sd', store);
    child = spawn(bin, args, { stdio: 'ignore' });
    await waitForPort(port, 10_000);
  };
  const killNow = async (signal: NodeJS.Signals): Promise<void> => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill(signal);
    });
  };
  await launch();
  const onExit = (): void => {
    child?.kill('SIGKILL');
    rmSync(store, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    kill: () => killNow('SIGKILL'),
    restart: launch,
    async stop() {
      await killNow('SIGTERM');
      rmSync(store, { recursive: true, force: true });
      process.removeListener('exit', onExit);
    },
  };
}

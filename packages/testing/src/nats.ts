import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createUser, encodeUser } from '@nats-io/jwt';
import type { ConnectionOptions, NatsConnection } from '@nats-io/transport-node';
import type { NatsRole } from '@paddock/contracts';
import {
  connectNats,
  formatCreds,
  generateInstallationKeys,
  generateOperatorKeys,
  installationAccountJwt,
  keyPair,
  NatsUserIssuer,
  operatorJwt,
  publicKeyOf,
  renderServerConfig,
  systemAccountJwt,
  writeSecretFile,
  type InstallationKeys,
  type IssueOptions,
} from '@paddock/nats';
import { freePort } from './ports';

/**
 * One Paddock installation (one NATS account) on a throwaway server: credentials for every role,
 * as the platform issues them, and connections made with them.
 */
export interface NatsTestInstallation {
  readonly accountPublicKey: string;
  /** Issues users of any role into this installation's account (the control plane holds only two roles' keys). */
  readonly issuer: NatsUserIssuer;
  /** Issues a user of `role` named `name` and writes its `.creds` file (0600); returns its path. */
  credsFile(role: NatsRole, name?: string, opts?: IssueOptions): Promise<string>;
  /** The seed file of a role's signing key (what the control plane is given for runners and controllers). */
  signingKeyFile(role: NatsRole): string;
  /** `NATS_URL` and `NATS_CREDS` for a process of `role` (plus the control plane's signing key files). */
  env(role: NatsRole, name?: string, opts?: IssueOptions): Promise<Record<string, string>>;
  /** A connection as a user of `role` (its permissions apply). */
  connectAs(role: NatsRole, name?: string, opts?: Partial<ConnectionOptions>): Promise<NatsConnection>;
  /**
   * A connection with every permission of the account, for test harnesses that play several
   * parts (a fake runner and a fake gateway on one connection). No platform process gets one.
   */
  connectHarness(opts?: Partial<ConnectionOptions>): Promise<NatsConnection>;
}

export interface ThrowawayNats extends NatsTestInstallation {
  readonly url: string;
  readonly port: number;
  /** False when started with `{ auth: false }` (anonymous connections accepted, no permissions). */
  readonly auth: boolean;
  /** Every installation (account) on this server; the first is the one the shortcuts above use. */
  readonly installations: readonly NatsTestInstallation[];
  /** SIGKILLs the server (a crash); JetStream data stays in its store directory. */
  kill(): Promise<void>;
  /** Starts the server again on the same port and store. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const NATS_BIN_CANDIDATES = ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'];

/** The user name each role gets when a test does not name one. */
const DEFAULT_NAMES: Record<NatsRole, string> = { runner: 'test-runner', controller: 'test-cluster', gateway: 'gateway', 'control-plane': 'control-plane' };

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

function testInstallation(url: string, dir: string, keys: InstallationKeys | undefined): NatsTestInstallation {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const accountPublicKey = keys ? publicKeyOf(keys.account) : '';
  const issuer = new NatsUserIssuer(accountPublicKey, keys?.signing ?? {});
  let n = 0;
  const credsFile = async (role: NatsRole, name = DEFAULT_NAMES[role], opts?: IssueOptions): Promise<string> => {
    const file = join(dir, `${role}-${name}-${++n}.creds`);
    writeSecretFile(file, (await issuer.issue(role, name, opts)).creds);
    return file;
  };
  const signingKeyFile = (role: NatsRole): string => {
    const file = join(dir, `${role}.nk`);
    if (keys && !existsSync(file)) writeSecretFile(file, `${keys.signing[role]}\n`);
    return file;
  };
  const base: Partial<ConnectionOptions> = { maxReconnectAttempts: -1, reconnectTimeWait: 100 };
  return {
    accountPublicKey,
    issuer,
    credsFile,
    signingKeyFile,
    async env(role, name, opts) {
      if (!keys) return { NATS_URL: url };
      return {
        NATS_URL: url,
        NATS_CREDS: await credsFile(role, name, opts),
        ...(role === 'control-plane'
          ? { PADDOCK_NATS_RUNNER_SIGNING_KEY: signingKeyFile('runner'), PADDOCK_NATS_CONTROLLER_SIGNING_KEY: signingKeyFile('controller') }
          : {}),
      };
    },
    async connectAs(role, name, opts) {
      return connectNats({ ...base, ...opts, servers: url, ...(keys ? { credsFile: await credsFile(role, name) } : {}) });
    },
    async connectHarness(opts) {
      if (!keys) return connectNats({ ...base, ...opts, servers: url });
      const user = createUser();
      const jwt = await encodeUser('test-harness', user, keyPair(keys.account), { pub: { allow: ['>'], deny: [] }, sub: { allow: ['>'], deny: [] } });
      const file = join(dir, `harness-${++n}.creds`);
      writeSecretFile(file, formatCreds(jwt, new TextDecoder().decode(user.getSeed())));
      return connectNats({ ...base, ...opts, servers: url, credsFile: file });
    },
  };
}

/**
 * Starts a private nats-server on a free loopback port, by default with authentication on as the
 * platform runs it: operator mode, one account per installation (`installations`, default 1),
 * users issued per role. `{ auth: false }` starts an open server (anonymous clients accepted).
 */
export async function startNats(opts: { port?: number; jetstream?: boolean; auth?: boolean; installations?: number } = {}): Promise<ThrowawayNats> {
  const bin = NATS_BIN_CANDIDATES.find((p) => existsSync(p));
  if (!bin) throw new Error('nats-server not found; apt-get install nats-server');
  const port = opts.port ?? (await freePort());
  const store = mkdtempSync(join(tmpdir(), 'paddock-nats-'));
  const url = `nats://127.0.0.1:${port}`;
  const auth = opts.auth !== false;
  const operator = auth ? generateOperatorKeys() : undefined;
  const keys = auth ? Array.from({ length: Math.max(1, opts.installations ?? 1) }, () => generateInstallationKeys()) : [undefined];
  const installations = keys.map((k, i) => testInstallation(url, join(store, `installation-${i}`), k));
  const args = ['-a', '127.0.0.1', '-p', String(port)];
  if (operator) {
    const systemAccount = publicKeyOf(operator.systemAccount);
    const accounts: Record<string, string> = { [systemAccount]: await systemAccountJwt(operator) };
    for (const [i, k] of keys.entries()) if (k) accounts[publicKeyOf(k.account)] = await installationAccountJwt(operator, k, `paddock-test-${i}`);
    const conf = join(store, 'server.conf');
    writeSecretFile(conf, renderServerConfig({ host: '127.0.0.1', port, operatorJwt: await operatorJwt(operator, 'paddock-test'), systemAccount, accounts }));
    args.push('-c', conf);
  }
  if (opts.jetstream !== false) args.push('-js', '-sd', join(store, 'js'));
  let child: ChildProcess | undefined;
  const launch = async (): Promise<void> => {
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
  const first = installations[0];
  if (!first) throw new Error('no installation');
  return {
    ...first,
    url,
    port,
    auth,
    installations,
    kill: () => killNow('SIGKILL'),
    restart: launch,
    async stop() {
      await killNow('SIGTERM');
      rmSync(store, { recursive: true, force: true });
      process.removeListener('exit', onExit);
    },
  };
}

import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NATS_ROLES, type NatsRole } from '@paddock/contracts';
import { writeSecretFile } from './creds';
import {
  generateInstallationKeys,
  generateOperatorKeys,
  installationAccountJwt,
  operatorJwt,
  publicKeyOf,
  renderServerConfig,
  systemAccountJwt,
  type InstallationKeys,
  type OperatorKeys,
} from './installation';
import { NatsUserIssuer, type IssueOptions } from './issuer';

/**
 * One installation's NATS material in a directory private to its owner (0700, every file 0600):
 *
 * ```
 * operator.nk  system-account.nk  account.nk     nkey seeds (secrets)
 * signing/<role>.nk                              scoped signing keys, one per role (secrets)
 * server.conf                                    nats-server configuration (operator mode)
 * creds/<role>-<name>.creds                      issued user credentials (secrets)
 * ```
 *
 * Opening an existing directory keeps its keys (issued credentials stay valid) and re-renders
 * the account JWT and server configuration from them.
 */
export interface InstallationDir {
  dir: string;
  accountPublicKey: string;
  serverConfigFile: string;
  /** An issuer holding every role's signing key. */
  issuer: NatsUserIssuer;
  signingKeyFile(role: NatsRole): string;
  /** Issues a user and writes its `.creds` file (0600); returns the path. */
  writeCreds(role: NatsRole, name: string, opts?: IssueOptions): Promise<string>;
}

export interface InstallationDirOptions {
  /** Account (installation) name shown by the server; default `paddock`. */
  name?: string;
  /** (Re)write `server.conf` for a server listening here; left as it is without. */
  server?: { host: string; port: number; jetStreamDir?: string };
}

function loadOrCreate(file: string, make: () => string): string {
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const seed = make();
  writeSecretFile(file, `${seed}\n`);
  return seed;
}

export async function openInstallationDir(dir: string, opts: InstallationDirOptions = {}): Promise<InstallationDir> {
  mkdirSync(join(dir, 'signing'), { recursive: true, mode: 0o700 });
  mkdirSync(join(dir, 'creds'), { recursive: true, mode: 0o700 });
  for (const d of [dir, join(dir, 'signing'), join(dir, 'creds')]) chmodSync(d, 0o700);
  const fresh = generateOperatorKeys();
  const operator: OperatorKeys = {
    operator: loadOrCreate(join(dir, 'operator.nk'), () => fresh.operator),
    systemAccount: loadOrCreate(join(dir, 'system-account.nk'), () => fresh.systemAccount),
  };
  const generated = generateInstallationKeys();
  const keys: InstallationKeys = {
    account: loadOrCreate(join(dir, 'account.nk'), () => generated.account),
    signing: Object.fromEntries(NATS_ROLES.map((r) => [r, loadOrCreate(join(dir, 'signing', `${r}.nk`), () => generated.signing[r])])) as Record<NatsRole, string>,
  };
  const name = opts.name ?? 'paddock';
  const accountPublicKey = publicKeyOf(keys.account);
  const systemAccount = publicKeyOf(operator.systemAccount);
  const serverConfigFile = join(dir, 'server.conf');
  if (opts.server) {
    writeSecretFile(
      serverConfigFile,
      renderServerConfig({
        host: opts.server.host,
        port: opts.server.port,
        operatorJwt: await operatorJwt(operator, `${name}-operator`),
        systemAccount,
        accounts: { [systemAccount]: await systemAccountJwt(operator), [accountPublicKey]: await installationAccountJwt(operator, keys, name) },
        ...(opts.server.jetStreamDir ? { jetStreamDir: opts.server.jetStreamDir } : {}),
        serverName: name,
      }),
    );
  }
  const issuer = new NatsUserIssuer(accountPublicKey, keys.signing);
  return {
    dir,
    accountPublicKey,
    serverConfigFile,
    issuer,
    signingKeyFile: (role) => join(dir, 'signing', `${role}.nk`),
    async writeCreds(role, userName, issueOpts) {
      const file = join(dir, 'creds', `${role}-${userName}.creds`);
      writeSecretFile(file, (await issuer.issue(role, userName, issueOpts)).creds);
      return file;
    },
  };
}

#!/usr/bin/env node
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { NATS_ROLES, type NatsRole } from '@paddock/contracts';
import { openInstallationDir } from './installation-dir';

const USAGE = `paddock-nats: the NATS material of a Paddock installation (operator mode, one account).

  paddock-nats init <dir> [--host 0.0.0.0] [--port 4222] [--name paddock]
      Creates (or reopens) the operator, account and per-role signing keys in <dir> (0700, files
      0600), writes <dir>/server.conf for nats-server and issues the gateway and control-plane users.
  paddock-nats issue <dir> <role> <name> [--ttl <seconds>]
      Issues one user of <role> (${NATS_ROLES.join(', ')}) named <name> (runner id, cluster id…);
      writes <dir>/creds/<role>-<name>.creds and prints its path.
`;

function flag(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  const v = i >= 0 ? args[i + 1] : undefined;
  return v ?? fallback;
}

async function main(argv: string[]): Promise<number> {
  const [cmd, dir, ...rest] = argv;
  if (!cmd || !dir || cmd === '--help') {
    process.stdout.write(USAGE);
    return cmd ? 0 : 2;
  }
  if (cmd === 'init') {
    const port = Number(flag(rest, 'port', '4222'));
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`--port must be a TCP port (1..65535), got ${flag(rest, 'port', '')}`);
    const inst = await openInstallationDir(dir, { name: flag(rest, 'name', 'paddock'), server: { host: flag(rest, 'host', '0.0.0.0'), port } });
    const gw = await inst.writeCreds('gateway', 'gateway');
    const cp = await inst.writeCreds('control-plane', 'control-plane');
    process.stdout.write(
      `nats-server config  ${inst.serverConfigFile}   (nats-server -c ${inst.serverConfigFile})\n` +
        `gateway             NATS_CREDS=${gw}\n` +
        `control plane       NATS_CREDS=${cp}\n` +
        `                    PADDOCK_NATS_RUNNER_SIGNING_KEY=${inst.signingKeyFile('runner')}\n` +
        `                    PADDOCK_NATS_CONTROLLER_SIGNING_KEY=${inst.signingKeyFile('controller')}\n`,
    );
    return 0;
  }
  if (cmd === 'issue') {
    const [role, name] = rest;
    if (!role || !NATS_ROLES.includes(role as NatsRole) || !name) throw new Error(`issue needs <role> (${NATS_ROLES.join(', ')}) and <name>`);
    const ttl = rest.includes('--ttl') ? Number(flag(rest, 'ttl', '')) : undefined;
    if (ttl !== undefined && !(ttl > 0)) throw new Error('--ttl must be a positive number of seconds');
    if (!existsSync(join(dir, 'account.nk'))) throw new Error(`${dir} holds no installation: run paddock-nats init ${dir} first`);
    const inst = await openInstallationDir(dir);
    process.stdout.write(`${await inst.writeCreds(role as NatsRole, name, ttl ? { ttlSeconds: ttl } : {})}\n`);
    return 0;
  }
  process.stderr.write(`unknown command ${JSON.stringify(cmd)}\n${USAGE}`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`paddock-nats: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);

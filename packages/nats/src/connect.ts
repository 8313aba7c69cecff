import { connect, credsAuthenticator, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';
import { NATS_ROLES, natsRolePermissions, type NatsRole } from '@paddock/contracts';
import { credsInfo, readCredsFile } from './creds';

export interface PaddockNatsOptions extends Omit<ConnectionOptions, 'servers' | 'authenticator' | 'inboxPrefix'> {
  servers: string | string[];
  /**
   * Path of the process's `.creds` file (`NATS_CREDS`). Read again at every (re)connect, so a
   * rotated file takes effect at the next reconnect, which an expiring JWT forces. Unset = connect
   * without credentials (only a server with authentication off accepts that).
   */
  credsFile?: string;
}

const isRole = (r: string | undefined): r is NatsRole => NATS_ROLES.includes(r as NatsRole);

/**
 * Connects one Paddock process. With credentials, the process's replies come under its own inbox
 * prefix (its role's permissions allow it that one and no other), derived from the user named in
 * the file.
 *
 * @example
 * const nc = await connectNats({ servers: env.NATS_URL, credsFile: env.NATS_CREDS, name: 'paddock-gateway' });
 */
export async function connectNats(opts: PaddockNatsOptions): Promise<NatsConnection> {
  const { credsFile, ...rest } = opts;
  if (!credsFile) return connect(rest);
  const info = credsInfo(new TextDecoder().decode(readCredsFile(credsFile)), `NATS_CREDS ${credsFile}`);
  const inboxPrefix = isRole(info.role) ? natsRolePermissions(info.role, info.name).inboxPrefix : undefined;
  return connect({
    ...rest,
    authenticator: credsAuthenticator(() => readCredsFile(credsFile)),
    ...(inboxPrefix ? { inboxPrefix } : {}),
    // An expired or not-yet-rotated file is refused once; the next attempt reads the file again.
    ignoreAuthErrorAbort: true,
  });
}

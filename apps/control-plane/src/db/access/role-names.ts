import { createHash } from 'node:crypto';

const sha256Hex = (s: string): string => createHash('sha256').update(s).digest('hex');

/** Postgres truncates identifiers at 63 bytes; every name below stays under it. */
const MAX_PREFIX = 40;

/**
 * The database roles of one installation. Roles are objects of the whole Postgres server, not of
 * a database, so their names start with a prefix taken from the installation's database name
 * (unique on a server): two installations, or two test databases, on one server never share a
 * role. A database name that is not a plain lowercase identifier, or is long, gets a hash suffix.
 */
export interface AccessRoleNames {
  /** The gateway's login role (owns the `gateway` schema). */
  gateway: string;
  /** A group role without login: every controller login is a member and gets its privileges. */
  controllers: string;
  /** The login role of the controller of one cluster. */
  controllerLogin(organizationId: string, clusterName: string): string;
}

export function accessRolePrefix(database: string): string {
  const clean = database.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  if (clean === database && clean.length <= MAX_PREFIX && /^[a-z_]/.test(clean)) return clean;
  return `pdk_${clean.slice(0, MAX_PREFIX - 13)}_${sha256Hex(database).slice(0, 8)}`;
}

export function accessRoleNames(database: string): AccessRoleNames {
  const prefix = accessRolePrefix(database);
  return {
    gateway: `${prefix}_gateway`,
    controllers: `${prefix}_controller`,
    // The cluster name alone could exceed the limit and collide across organizations: hash both.
    controllerLogin: (organizationId, clusterName) => `${prefix}_ctl_${sha256Hex(`${organizationId}/${clusterName}`).slice(0, 12)}`,
  };
}

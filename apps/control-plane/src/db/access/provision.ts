import { sql, type Kysely } from 'kysely';
import { GATEWAY_DB_SCHEMA } from '@paddock/contracts';
import { applyDatabaseAccess } from './apply-access';
import { accessRoleNames, type AccessRoleNames } from './role-names';
import { newRolePassword, scramVerifier } from './scram';

/**
 * Creating the roles: this needs a database administrator (a role that may create roles and
 * owns the control plane's tables, or a superuser), which no Paddock process is. The
 * `db-access` command runs these; `pnpm start` and the test kits run that command.
 */

export interface ProvisionedLogin {
  role: string;
  /** `adminUrl` with this role and its new password: the connection string to hand over. */
  databaseUrl: string;
}

async function namesOf(admin: Kysely<unknown>): Promise<AccessRoleNames> {
  const { rows } = await sql<{ db: string }>`SELECT current_database() AS db`.execute(admin);
  return accessRoleNames(rows[0]?.db ?? '');
}

async function roleExists(admin: Kysely<unknown>, role: string): Promise<boolean> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_roles WHERE rolname = ${role}`.execute(admin);
  return (rows[0]?.n ?? 0) > 0;
}

/** Creates the login role if missing and gives it a fresh password (a rotation when it existed). */
async function ensureLogin(admin: Kysely<unknown>, adminUrl: string, role: string): Promise<ProvisionedLogin> {
  const password = newRolePassword();
  const verifier = sql.lit(scramVerifier(password));
  if (await roleExists(admin, role)) await sql`ALTER ROLE ${sql.id(role)} LOGIN PASSWORD ${verifier}`.execute(admin);
  else await sql`CREATE ROLE ${sql.id(role)} LOGIN PASSWORD ${verifier}`.execute(admin);
  const url = new URL(adminUrl);
  url.username = role;
  url.password = password;
  return { role, databaseUrl: url.toString() };
}

/**
 * The gateway's login role, and its schema (`gateway`, owned by it: its migrations create its
 * tables there, as itself). Gateway tables another role created (an earlier version left them in
 * `public`; a gateway run as a superuser makes them in its schema) are handed to the role, which
 * moves those of `public` into its schema at its next start.
 */
export async function provisionGatewayRole(admin: Kysely<unknown>, adminUrl: string): Promise<ProvisionedLogin> {
  const names = await namesOf(admin);
  const login = await ensureLogin(admin, adminUrl, names.gateway);
  const gw = sql.id(names.gateway);
  await sql`CREATE SCHEMA IF NOT EXISTS ${sql.id(GATEWAY_DB_SCHEMA)} AUTHORIZATION ${gw}`.execute(admin);
  await sql`ALTER SCHEMA ${sql.id(GATEWAY_DB_SCHEMA)} OWNER TO ${gw}`.execute(admin);
  const tables = await sql<{ s: string; t: string }>`
    SELECT schemaname AS s, tablename AS t FROM pg_tables
     WHERE (schemaname = 'public' AND tablename LIKE 'gw\\_%') OR schemaname = ${GATEWAY_DB_SCHEMA}`.execute(admin);
  for (const { s, t } of tables.rows) await sql`ALTER TABLE ${sql.table(`${s}.${t}`)} OWNER TO ${gw}`.execute(admin);
  await applyDatabaseAccess(admin);
  return login;
}

export interface ClusterRef {
  clusterName: string;
  /** Default: the installation's only organization. */
  organizationId?: string;
}

async function organizationOf(admin: Kysely<unknown>, ref: ClusterRef): Promise<string> {
  const { rows } = await sql<{ id: string; name: string }>`SELECT id::text AS id, name FROM cp_organizations ORDER BY created_at`.execute(admin);
  if (ref.organizationId) {
    if (!rows.some((r) => r.id === ref.organizationId)) throw new Error(`organization ${ref.organizationId} does not exist`);
    return ref.organizationId;
  }
  const [only, ...more] = rows;
  if (!only) throw new Error('no organization exists yet: start the control plane once (it creates the operator organization)');
  if (more.length) throw new Error(`several organizations exist; name one with --organization (${rows.map((r) => `${r.id} ${r.name}`).join(', ')})`);
  return only.id;
}

/**
 * The login role of one cluster's controller, bound to that cluster (organization and cluster
 * name: the cluster need not be registered yet; the controller registers it when it starts).
 * Running it again rotates the password.
 */
export async function provisionControllerLogin(admin: Kysely<unknown>, adminUrl: string, ref: ClusterRef): Promise<ProvisionedLogin & { organizationId: string }> {
  const names = await namesOf(admin);
  const organizationId = await organizationOf(admin, ref);
  if (!(await roleExists(admin, names.controllers))) await sql`CREATE ROLE ${sql.id(names.controllers)} NOLOGIN`.execute(admin);
  const role = names.controllerLogin(organizationId, ref.clusterName);
  const login = await ensureLogin(admin, adminUrl, role);
  await sql`GRANT ${sql.id(names.controllers)} TO ${sql.id(role)}`.execute(admin);
  await sql`
    INSERT INTO cp_controller_logins (role_name, organization_id, cluster_name) VALUES (${role}, ${organizationId}, ${ref.clusterName})
    ON CONFLICT (role_name) DO UPDATE SET organization_id = EXCLUDED.organization_id, cluster_name = EXCLUDED.cluster_name`.execute(admin);
  await applyDatabaseAccess(admin);
  return { ...login, organizationId };
}

/** Drops a cluster's controller login (its open sessions are ended where the administrator may). */
export async function revokeControllerLogin(admin: Kysely<unknown>, ref: ClusterRef): Promise<string> {
  const names = await namesOf(admin);
  const role = names.controllerLogin(await organizationOf(admin, ref), ref.clusterName);
  await sql`DELETE FROM cp_controller_logins WHERE role_name = ${role}`.execute(admin);
  if (await roleExists(admin, role)) {
    await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = ${role}`.execute(admin).catch(() => undefined);
    await sql`DROP ROLE ${sql.id(role)}`.execute(admin);
  }
  return role;
}

export interface AccessRoleRow {
  role: string;
  kind: 'gateway' | 'controllers' | 'controller';
  exists: boolean;
  organizationId?: string;
  clusterName?: string;
}

/** The installation's roles, and the cluster each controller login is bound to. */
export async function listAccessRoles(admin: Kysely<unknown>): Promise<AccessRoleRow[]> {
  const names = await namesOf(admin);
  const rows: AccessRoleRow[] = [
    { role: names.gateway, kind: 'gateway', exists: await roleExists(admin, names.gateway) },
    { role: names.controllers, kind: 'controllers', exists: await roleExists(admin, names.controllers) },
  ];
  const logins = await sql<{ role_name: string; organization_id: string; cluster_name: string; present: boolean }>`
    SELECT l.role_name, l.organization_id, l.cluster_name, EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = l.role_name) AS present
      FROM cp_controller_logins l ORDER BY l.organization_id, l.cluster_name`.execute(admin);
  for (const l of logins.rows) {
    rows.push({ role: l.role_name, kind: 'controller', exists: l.present, organizationId: l.organization_id, clusterName: l.cluster_name });
  }
  return rows;
}

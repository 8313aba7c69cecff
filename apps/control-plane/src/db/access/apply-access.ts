import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import { CP_RUNNERS_V2, CP_RUNNER_POLICIES_V1 } from '@paddock/contracts';
import { accessRoleNames, type AccessRoleNames } from './role-names';

/**
 * A row-level security policy a role gets on one table. Policies are never edited in place: a
 * new rule gets a new name (`_v2`), so "the policy of this name exists for this role" is enough
 * to know it is current, and no start-up has to lock a table to re-create it.
 */
interface RowPolicy {
  name: string;
  table: string;
  using: RawBuilder<unknown>;
}

/** Rows of the controller's own cluster: the cluster its login is bound to. */
const OWN_CLUSTER = (table: string): RawBuilder<unknown> => sql`EXISTS (
  SELECT 1 FROM cp_controller_logins l
   WHERE l.role_name = current_user
     AND l.organization_id = ${sql.ref(`${table}.organization_id`)}
     AND l.cluster_name = ${sql.ref(`${table}.cluster_name`)})`;

const CONTROLLER_POLICIES: RowPolicy[] = [
  { name: 'cp_controller_logins_own_v1', table: 'cp_controller_logins', using: sql`role_name = current_user` },
  { name: 'cp_runners_controller_cluster_v1', table: 'cp_runners', using: OWN_CLUSTER('cp_runners') },
  { name: 'cp_runner_clusters_controller_cluster_v1', table: 'cp_runner_clusters', using: OWN_CLUSTER('cp_runner_clusters') },
  // The events of its own cluster's runner streams (cp_runner_clusters is itself filtered).
  {
    name: 'es_messages_controller_cluster_v1',
    table: 'es_messages',
    using: sql`stream_type = 'managed_runner' AND EXISTS (SELECT 1 FROM cp_runner_clusters c WHERE c.stream_id = es_messages.stream_id)`,
  },
];

const GATEWAY_POLICIES: RowPolicy[] = [{ name: 'cp_runners_gateway_v1', table: 'cp_runners', using: sql`true` }];

/** `GRANT SELECT (a, b) ON table`: a security_invoker view needs the reader's own column privileges. */
const columns = (names: readonly string[]): RawBuilder<unknown> => sql.join(names.map((n) => sql.id(n)));

async function grantControllers(trx: Transaction<unknown>, role: string): Promise<void> {
  const r = sql.id(role);
  await sql`GRANT SELECT ON cp_runners_v1, cp_runners_v2, cp_runner_log_v1, cp_controller_logins TO ${r}`.execute(trx);
  await sql`GRANT SELECT (${columns(Object.keys(CP_RUNNERS_V2.columns))}) ON cp_runners TO ${r}`.execute(trx);
  await sql`GRANT SELECT (uid, stream_id) ON cp_runner_clusters TO ${r}`.execute(trx);
  // Positions only: a controller never reads another event's payload, not even its own cluster's.
  await sql`GRANT SELECT (global_position, transaction_id, stream_id, stream_type) ON es_messages TO ${r}`.execute(trx);
}

async function grantGateway(trx: Transaction<unknown>, role: string): Promise<void> {
  const r = sql.id(role);
  await sql`GRANT SELECT ON cp_runner_policies_v1 TO ${r}`.execute(trx);
  await sql`GRANT SELECT (${columns(Object.keys(CP_RUNNER_POLICIES_V1.columns))}) ON cp_runners TO ${r}`.execute(trx);
  await sql`GRANT EXECUTE ON FUNCTION cp_token_principal_v1(text) TO ${r}`.execute(trx);
}

async function ensurePolicies(trx: Transaction<unknown>, role: string, policies: RowPolicy[]): Promise<void> {
  for (const p of policies) {
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_policy
       WHERE polname = ${p.name} AND polrelid = ${p.table}::regclass
         AND (SELECT oid FROM pg_roles WHERE rolname = ${role}) = ANY (polroles)`.execute(trx);
    if (rows[0]?.n) continue;
    await sql`DROP POLICY IF EXISTS ${sql.id(p.name)} ON ${sql.table(p.table)}`.execute(trx);
    await sql`CREATE POLICY ${sql.id(p.name)} ON ${sql.table(p.table)} FOR SELECT TO ${sql.id(role)} USING (${p.using})`.execute(trx);
  }
}

export interface AppliedAccess {
  names: AccessRoleNames;
  /** The installation's roles that exist (and now have their privileges). */
  applied: string[];
}

/**
 * Gives the installation's gateway and controller roles, where they exist, exactly the
 * privileges and row-level security policies they need on the published relations. Idempotent;
 * runs after every migration run (so a release that publishes a new view grants it at once)
 * and after the `db-access` command creates a role. Needs the rights of the tables' owner, not
 * the right to create roles.
 */
export async function applyDatabaseAccess(db: Kysely<unknown>): Promise<AppliedAccess> {
  return db.transaction().execute(async (trx) => {
    // Concurrent GRANTs on one table fail ("tuple concurrently updated"): one applier at a time.
    await sql`SELECT pg_advisory_xact_lock(hashtext('paddock.database-access'))`.execute(trx);
    const { rows } = await sql<{ db: string }>`SELECT current_database() AS db`.execute(trx);
    const names = accessRoleNames(rows[0]?.db ?? '');
    const present = new Set(
      (await sql<{ rolname: string }>`SELECT rolname FROM pg_roles WHERE rolname IN (${names.gateway}, ${names.controllers})`.execute(trx)).rows.map((r) => r.rolname),
    );
    if (present.has(names.controllers)) {
      await grantControllers(trx, names.controllers);
      await ensurePolicies(trx, names.controllers, CONTROLLER_POLICIES);
    }
    if (present.has(names.gateway)) {
      await grantGateway(trx, names.gateway);
      await ensurePolicies(trx, names.gateway, GATEWAY_POLICIES);
    }
    return { names, applied: [...present] };
  });
}

import { sql, type Kysely } from 'kysely';
import { Client } from 'pg';
import { hashApiToken, type ManagedRunner } from '@paddock/contracts';
import { createPostgresDb } from '@paddock/event-store';
import { accessRoleNames } from '../../src/db/access/role-names';
import { provisionControllerLogin, provisionGatewayRole, revokeControllerLogin, listAccessRoles } from '../../src/db/access/provision';
import { scramVerifier } from '../../src/db/access/scram';
import { api, startTestApp, type TestApp } from '../support/app';
import { installReport } from '../support/fixtures';
import { report } from '../runners/support';

const PERMISSION_DENIED = '42501';
/** A view over a join cannot be written through at all, whoever asks. */
const VIEW_NOT_UPDATABLE = '55000';

/** The SQLSTATE a statement fails with, or 'ok'. */
async function outcome(c: Client, text: string, values: unknown[] = []): Promise<string> {
  try {
    await c.query(text, values);
    return 'ok';
  } catch (e) {
    return (e as { code?: string }).code ?? String(e);
  }
}

async function connectAs(url: string): Promise<Client> {
  const c = new Client({ connectionString: url });
  await c.connect();
  return c;
}

/**
 * The database roles of the gateway and of each cluster's controller, created by the real
 * provisioning code (what `db-access` runs) on a real migrated database, then used as those roles.
 * Organization A has clusters `east` and `west`; organization B has a cluster named `east` too.
 */
describe('database roles: least privilege for the gateway and each controller', () => {
  let t: TestApp;
  let admin: Kysely<unknown>;
  let east: Client;
  let west: Client;
  let gateway: Client;
  let orgB: { id: string; adminToken: string };
  const uid: Record<string, string> = {};

  const createRunner = async (token: string, runnerId: string, clusterName: string, marker: string): Promise<void> => {
    await t.registerCluster(token, { name: clusterName, zone: 'us-east-1' });
    const r = await api<ManagedRunner>(t, 'POST', '/v1/sandbox/managedRunners', {
      token,
      body: { identity: { runnerId, zone: 'us-east-1', clusterName }, policy: { displayName: marker } },
    });
    if (r.status !== 200) throw new Error(`creating ${runnerId}: ${r.status} ${r.text}`);
    uid[runnerId] = r.body.uid;
  };

  beforeAll(async () => {
    t = await startTestApp();
    admin = createPostgresDb<unknown>(t.databaseUrl, { max: 2 });
    orgB = await t.createOrganization('org-b');
    await createRunner(t.adminToken, 'a-east', 'east', 'policy-of-a-east');
    await createRunner(t.adminToken, 'a-west', 'west', 'policy-of-a-west');
    await createRunner(orgB.adminToken, 'b-east', 'east', 'policy-of-b-east');
    const eastLogin = await provisionControllerLogin(admin, t.databaseUrl, { clusterName: 'east', organizationId: t.organizationId });
    const westLogin = await provisionControllerLogin(admin, t.databaseUrl, { clusterName: 'west', organizationId: t.organizationId });
    const gatewayLogin = await provisionGatewayRole(admin, t.databaseUrl);
    [east, west, gateway] = await Promise.all([connectAs(eastLogin.databaseUrl), connectAs(westLogin.databaseUrl), connectAs(gatewayLogin.databaseUrl)]);
  });

  afterAll(async () => {
    await Promise.all([east, west, gateway].map((c) => c?.end()));
    await admin?.destroy();
    await t?.close();
  });

  const publicRelations = async (): Promise<{ name: string; kind: string; column: string }[]> =>
    (
      await sql<{ name: string; kind: string; column: string }>`
        SELECT c.relname AS name, c.relkind::text AS kind,
               (SELECT attname FROM pg_attribute WHERE attrelid = c.oid AND attnum = 1) AS column
          FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'v')
         ORDER BY 1`.execute(admin)
    ).rows;

  /** Every write to every table and view of the control plane: each must be refused for lack of privilege. */
  async function writesAs(c: Client): Promise<Record<string, string>> {
    const results: Record<string, string> = {};
    for (const r of await publicRelations()) {
      const q = `"${r.name}"`;
      results[`INSERT ${r.name}`] = await outcome(c, `INSERT INTO ${q} DEFAULT VALUES`);
      results[`UPDATE ${r.name}`] = await outcome(c, `UPDATE ${q} SET "${r.column}" = "${r.column}"`);
      results[`DELETE ${r.name}`] = await outcome(c, `DELETE FROM ${q}`);
      if (r.kind === 'r') results[`TRUNCATE ${r.name}`] = await outcome(c, `TRUNCATE ${q}`);
    }
    results['CREATE TABLE'] = await outcome(c, 'CREATE TABLE public.intruder (x int)');
    results['CREATE SCHEMA'] = await outcome(c, 'CREATE SCHEMA intruder');
    return results;
  }

  const allDenied = (results: Record<string, string>): void => {
    const allowed = Object.entries(results).filter(([what, code]) => code !== PERMISSION_DENIED && !(what.endsWith('cp_runner_log_v1') && code === VIEW_NOT_UPDATABLE));
    expect(allowed).toEqual([]);
    // Every table of the control plane and of the event store was tried.
    expect(Object.keys(results)).toEqual(expect.arrayContaining(['TRUNCATE cp_runners', 'TRUNCATE cp_api_tokens', 'TRUNCATE es_messages', 'TRUNCATE es_processors', 'INSERT cp_runners_v1']));
  };

  describe("a controller's role", () => {
    it('reads the runner rows of its own cluster only (not the other cluster, not another organization\'s cluster of the same name)', async () => {
      const view = await east.query<{ runner_id: string; policy: unknown }>('SELECT runner_id, policy FROM cp_runners_v1 ORDER BY runner_id');
      expect(view.rows).toEqual([{ runner_id: 'a-east', policy: { displayName: 'policy-of-a-east' } }]);
      expect((await west.query('SELECT runner_id FROM cp_runners_v1')).rows).toEqual([{ runner_id: 'a-west' }]);
      // The same rule holds below the view: the table itself shows no other cluster's row.
      expect((await east.query('SELECT runner_id FROM cp_runners')).rows).toEqual([{ runner_id: 'a-east' }]);
      expect((await east.query('SELECT count(*)::int AS n FROM cp_runners WHERE runner_id = $1', ['a-west'])).rows).toEqual([{ n: 0 }]);
      // v2 adds the runner's warm pools, under the same rule.
      expect((await east.query('SELECT runner_id, warm_pools FROM cp_runners_v2')).rows).toEqual([{ runner_id: 'a-east', warm_pools: [] }]);
      // Columns outside its contract are not readable at all.
      expect(await outcome(east, 'SELECT spec FROM cp_runners')).toBe(PERMISSION_DENIED);
      expect(await outcome(east, 'SELECT * FROM cp_runner_policies_v1')).toBe(PERMISSION_DENIED);
    });

    it("reads its own cluster's event positions but no payload, its own or another cluster's", async () => {
      const log = await east.query<{ runner_uid: string }>('SELECT global_position, transaction_id, runner_uid FROM cp_runner_log_v1');
      expect(log.rows.length).toBeGreaterThan(0);
      expect(new Set(log.rows.map((r) => r.runner_uid))).toEqual(new Set([uid['a-east']]));
      expect((await east.query('SELECT DISTINCT stream_id FROM es_messages')).rows).toEqual([{ stream_id: `managed_runner-${uid['a-east']}` }]);
      expect(await outcome(east, 'SELECT message_data FROM es_messages')).toBe(PERMISSION_DENIED);
      expect(await outcome(east, 'SELECT message_metadata FROM es_messages')).toBe(PERMISSION_DENIED);
      expect(await outcome(east, 'SELECT * FROM es_messages')).toBe(PERMISSION_DENIED);
      // No other route to another cluster's policy: its stream row, the cluster map, the login map.
      expect((await east.query('SELECT uid FROM cp_runner_clusters')).rows).toEqual([{ uid: uid['a-east'] }]);
      expect((await east.query('SELECT cluster_name FROM cp_controller_logins')).rows).toEqual([{ cluster_name: 'east' }]);
    });

    it("still sees its runner's deletion and removal in the log once the runner's row is gone", async () => {
      const before = (await west.query<{ n: number }>('SELECT count(*)::int AS n FROM cp_runner_log_v1')).rows[0]?.n ?? 0;
      expect((await api(t, 'DELETE', '/v1/sandbox/managedRunners/a-west', { token: t.adminToken })).status).toBe(200);
      const clusterId = (await api<{ id: string }>(t, 'GET', '/v1/clusters/west', { token: t.adminToken })).body.id;
      await report(t, installReport(t, 'a-west', clusterId, { gone: true, fencingToken: 5 }));
      expect((await api(t, 'GET', '/v1/sandbox/managedRunners/a-west', { token: t.adminToken })).status).toBe(404);
      expect((await west.query('SELECT runner_id FROM cp_runners_v1')).rows).toEqual([]);
      const log = await west.query<{ runner_uid: string }>('SELECT runner_uid FROM cp_runner_log_v1 ORDER BY transaction_id, global_position');
      expect(log.rows.length).toBeGreaterThanOrEqual(before + 2); // DeletionRequested, ..., Removed
      expect(new Set(log.rows.map((r) => r.runner_uid))).toEqual(new Set([uid['a-west']]));
      // And the other controller still sees none of it.
      expect((await east.query<{ runner_uid: string }>('SELECT runner_uid FROM cp_runner_log_v1')).rows.every((r) => r.runner_uid === uid['a-east'])).toBe(true);
    });

    it('cannot read tokens, organizations or any other table of the control plane', async () => {
      for (const table of ['cp_api_tokens', 'cp_organizations', 'cp_clusters', 'cp_releases', 'cp_profile_templates', 'es_streams', 'es_idempotency', 'es_processors']) {
        expect(await outcome(east, `SELECT * FROM ${table} LIMIT 1`), table).toBe(PERMISSION_DENIED);
      }
      expect(await outcome(east, 'SELECT * FROM cp_token_principal_v1($1)', [hashApiToken(t.adminToken)])).toBe(PERMISSION_DENIED);
    });

    it('can write nothing: every insert, update, delete and truncate on every table and view is refused', async () => {
      allDenied(await writesAs(east));
    });
  });

  describe("the gateway's role", () => {
    it("reads every runner's policy and authenticates a token by its hash, and nothing more of the control plane", async () => {
      const policies = await gateway.query<{ runner_id: string; organization_id: string }>('SELECT organization_id, runner_id, policy, policy_etag FROM cp_runner_policies_v1 ORDER BY runner_id');
      expect(policies.rows.map((r) => r.runner_id)).toEqual(expect.arrayContaining(['a-east', 'b-east']));
      const me = await gateway.query<{ token_id: string; organization_id: string; role: string }>('SELECT token_id, organization_id, role FROM cp_token_principal_v1($1)', [hashApiToken(orgB.adminToken)]);
      expect(me.rows.map((r) => [typeof r.token_id, r.organization_id, r.role])).toEqual([['string', orgB.id, 'SANDBOX_ADMIN']]);
      expect((await gateway.query('SELECT * FROM cp_token_principal_v1($1)', [hashApiToken('pdk_unknown-token-0123456789')])).rows).toEqual([]);
      for (const table of ['cp_api_tokens', 'cp_organizations', 'cp_clusters', 'cp_controller_logins', 'es_messages', 'es_streams', 'es_processors', 'cp_runners_v1', 'cp_runner_log_v1']) {
        expect(await outcome(gateway, `SELECT * FROM ${table} LIMIT 1`), table).toBe(PERMISSION_DENIED);
      }
      expect(await outcome(gateway, 'SELECT token_hash FROM cp_api_tokens')).toBe(PERMISSION_DENIED);
    });

    it("writes nothing of the control plane's, and owns its own schema", async () => {
      allDenied(await writesAs(gateway));
      expect(await outcome(gateway, 'CREATE TABLE gateway.own_table (x int)')).toBe('ok');
      expect(await outcome(gateway, 'DROP TABLE gateway.own_table')).toBe('ok');
    });
  });

  describe('provisioning', () => {
    it('names roles after the database, so two installations on one server never share one', async () => {
      const a = accessRoleNames('paddock');
      const b = accessRoleNames('paddock_staging');
      expect([a.gateway, a.controllers]).toEqual(['paddock_gateway', 'paddock_controller']);
      expect(b.gateway).not.toBe(a.gateway);
      expect(a.controllerLogin('org', 'east')).not.toBe(b.controllerLogin('org', 'east'));
      expect(a.controllerLogin('org-1', 'east')).not.toBe(a.controllerLogin('org-2', 'east'));
      // Names that are not plain identifiers, or are long, are hashed; all stay under Postgres' 63-byte limit.
      const odd = accessRoleNames(`Paddock-${'x'.repeat(80)}`);
      expect(odd.gateway).toMatch(/^pdk_[a-z0-9_]+_[0-9a-f]{8}_gateway$/);
      expect(odd.controllerLogin('o', 'c').length).toBeLessThanOrEqual(63);
      // This test database's own roles are the ones the database shows.
      const names = accessRoleNames(new URL(t.databaseUrl).pathname.slice(1));
      const roles = await listAccessRoles(admin);
      expect(roles.filter((r) => r.kind !== 'controller').map((r) => [r.role, r.exists])).toEqual([
        [names.gateway, true],
        [names.controllers, true],
      ]);
      expect(roles.filter((r) => r.kind === 'controller').map((r) => r.clusterName).sort()).toEqual(['east', 'west']);
    });

    it('stores a SCRAM-SHA-256 verifier Postgres itself would compute, never the password', async () => {
      const probe = `scram_probe_${process.pid}`;
      await sql`CREATE ROLE ${sql.id(probe)} LOGIN PASSWORD 'correct horse battery staple'`.execute(admin);
      try {
        const { rows } = await sql<{ v: string }>`SELECT rolpassword AS v FROM pg_authid WHERE rolname = ${probe}`.execute(admin);
        const stored = rows[0]?.v ?? '';
        const m = /^SCRAM-SHA-256\$(\d+):([^$]+)\$/.exec(stored);
        expect(m).not.toBeNull();
        expect(scramVerifier('correct horse battery staple', Buffer.from(m?.[2] ?? '', 'base64'), Number(m?.[1]))).toBe(stored);
      } finally {
        await sql`DROP ROLE ${sql.id(probe)}`.execute(admin);
      }
    });

    it('rotates a controller password on a second run and drops the login on revoke', async () => {
      const first = await provisionControllerLogin(admin, t.databaseUrl, { clusterName: 'spare', organizationId: t.organizationId });
      const second = await provisionControllerLogin(admin, t.databaseUrl, { clusterName: 'spare', organizationId: t.organizationId });
      expect(second.role).toBe(first.role);
      expect(new URL(second.databaseUrl).password).not.toBe(new URL(first.databaseUrl).password);
      expect(await revokeControllerLogin(admin, { clusterName: 'spare', organizationId: t.organizationId })).toBe(first.role);
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_roles WHERE rolname = ${first.role}`.execute(admin);
      expect(rows[0]?.n).toBe(0);
      await expect(provisionControllerLogin(admin, t.databaseUrl, { clusterName: 'x' })).rejects.toThrow(/several organizations exist/);
    });
  });
});

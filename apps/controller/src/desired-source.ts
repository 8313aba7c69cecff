import { sql, type Kysely } from 'kysely';
import { CP_RUNNERS_V2, type ControllerReadModels } from '@paddock/contracts';
import type { DesiredRunner } from './desired';

/** A view row, checked against its contract: a mismatch names the runner and the column. */
function toDesired(row: unknown): DesiredRunner {
  const parsed = CP_RUNNERS_V2.row.safeParse(row);
  if (!parsed.success) {
    const where = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`${CP_RUNNERS_V2.name} row ${JSON.stringify((row as { uid?: unknown }).uid)} does not match its contract: ${where}`);
  }
  const r = parsed.data;
  return {
    uid: r.uid,
    organizationId: r.organization_id,
    runnerId: r.runner_id,
    clusterId: r.cluster_id,
    zone: r.zone,
    runnerGroupId: r.runner_group_id,
    deleting: r.install_status === 'RUNNER_INSTALL_STATUS_DELETING',
    targetRevision: r.target_revision,
    targetImage: r.target_image,
    policy: r.policy,
    policyEtag: r.policy_etag,
    deploymentSpec: r.deployment_spec,
    warmPools: r.warm_pools,
  };
}

/**
 * Desired state comes from the control plane's published view `cp_runners_v2`, never from event
 * payloads: events only say which runner to look at again. The controller's database role sees
 * the rows of its own cluster only (row-level security); the cluster filter below is the same
 * rule said again. Reads go to the primary (the database the control plane writes), so a
 * reconcile never sees a state older than the event that woke it.
 */
export class DesiredSource {
  constructor(
    private readonly db: Kysely<ControllerReadModels>,
    private readonly clusterId: string,
  ) {}

  async byUid(uid: string): Promise<DesiredRunner | undefined> {
    const r = await this.db.selectFrom('cp_runners_v2').selectAll().where('uid', '=', uid).where('cluster_id', '=', this.clusterId).executeTakeFirst();
    return r ? toDesired(r) : undefined;
  }

  async all(): Promise<DesiredRunner[]> {
    const rows = await this.db.selectFrom('cp_runners_v2').selectAll().where('cluster_id', '=', this.clusterId).execute();
    return rows.map(toDesired);
  }

  /**
   * True when the control plane's view exists (the controller may start before its first
   * migration). A view this role may not read is a configuration error, said as such.
   */
  async ready(): Promise<boolean> {
    const r = await sql<{ present: boolean; readable: boolean | null }>`
      SELECT to_regclass(${`public.${CP_RUNNERS_V2.name}`}) IS NOT NULL AS present,
             CASE WHEN to_regclass(${`public.${CP_RUNNERS_V2.name}`}) IS NOT NULL
                  THEN has_table_privilege(${`public.${CP_RUNNERS_V2.name}`}, 'SELECT') END AS readable`.execute(this.db);
    const row = r.rows[0];
    if (row?.present && !row.readable) {
      throw new Error(
        `this controller's database role may not read ${CP_RUNNERS_V2.name}: connect with the role made for this cluster (node apps/control-plane/dist/db-access.js controller --cluster NAME)`,
      );
    }
    return Boolean(row?.present);
  }
}

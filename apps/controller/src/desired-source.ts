import { sql, type Kysely } from 'kysely';
import type { DesiredRunner, RunnerDeploymentSpec } from './desired';

/** The columns of the control plane's `cp_runners` read model the controller reads (read-only). */
export interface CpRunnersTable {
  cp_runners: {
    uid: string;
    organization_id: string;
    runner_id: string;
    cluster_id: string;
    zone: string;
    runner_group_id: string;
    install_status: string;
    target_revision: number;
    target_image: string;
    deployment_spec: unknown;
    policy: unknown;
    policy_etag: string;
  };
}

type Row = CpRunnersTable['cp_runners'];

function toDesired(r: Row): DesiredRunner {
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
    policy: (r.policy ?? null),
    policyEtag: r.policy_etag,
    deploymentSpec: r.deployment_spec as RunnerDeploymentSpec,
  };
}

/**
 * Desired state comes from the projection, never from event payloads: events only say which
 * runner to look at again. Reads go to the primary (the same DATABASE_URL the control plane
 * writes), so a reconcile never sees a state older than the event that woke it.
 */
export class DesiredSource {
  constructor(
    private readonly db: Kysely<CpRunnersTable>,
    private readonly clusterId: string,
  ) {}

  async byUid(uid: string): Promise<DesiredRunner | undefined> {
    const r = await this.db.selectFrom('cp_runners').selectAll().where('uid', '=', uid).where('cluster_id', '=', this.clusterId).executeTakeFirst();
    return r ? toDesired(r) : undefined;
  }

  async all(): Promise<DesiredRunner[]> {
    const rows = await this.db.selectFrom('cp_runners').selectAll().where('cluster_id', '=', this.clusterId).execute();
    return rows.map(toDesired);
  }

  /** True when the control plane's schema exists (the controller may start before its first migration). */
  async ready(): Promise<boolean> {
    const r = await sql<{ t: string | null }>`select to_regclass('public.cp_runners')::text as t`.execute(this.db);
    return Boolean(r.rows[0]?.t);
  }
}

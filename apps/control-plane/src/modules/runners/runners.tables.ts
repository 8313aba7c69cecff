import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Json<T> = ColumnType<T, string, string>;

/**
 * `cp_runners`: the read model of the managed-runner streams (one row per live runner), written in
 * the same transaction as every append (see `runner-row.projection.ts`). Heartbeat columns
 * (`last_heartbeat_time`, `observed_*`) are the exception: the intake updates them directly, since
 * heartbeats are not events. Removed runners have no row. Unique indexes enforce one runner id per
 * organization and one runner per cluster, so concurrent creates race safely. Other processes
 * never read this table's shape: they read the versioned views published from it
 * (`cp_runners_v1`, `cp_runner_policies_v1`; contracts in `@paddock/contracts`).
 */
export interface RunnersTable {
  uid: string;
  organization_id: string;
  runner_id: string;
  zone: string;
  cluster_id: string;
  cluster_name: string;
  runner_group_id: string;
  display_name: string;
  spec: Json<unknown>;
  policy: Json<unknown>;
  policy_revision: number;
  policy_etag: string;
  install_status: string;
  install_error: Json<unknown>;
  connection_status: string;
  last_heartbeat_time: ColumnType<Date | null, Date | string | null, Date | string | null>;
  observed_revision: number | null;
  observed_policy_etag: string | null;
  observed_using_default_policy: boolean | null;
  /** The runner's last reported `warmPoolStatus` (null before any). */
  observed_warm_pool_status: Json<unknown> | null;
  /** `spec.warmPools`, kept apart so that controllers can read it (through `cp_runners_v2`) and no other setting. */
  warm_pools: Json<unknown>;
  active_revision: number;
  target_revision: number;
  target_version: string;
  target_image: string;
  deployment_spec: Json<unknown>;
  allow_privileged_profile_annotations: boolean;
  profile_bindings: Json<unknown>;
  last_fencing_token: ColumnType<string, number, number>;
  stream_version: number;
  create_time: Timestamp;
  update_time: Timestamp;
}

/** `cp_profile_templates`: legacy v1beta2 profile templates (read model of their streams). */
export interface ProfileTemplatesTable {
  profile_template_id: string;
  organization_id: string;
  template: Json<unknown>;
  create_time: Timestamp;
  seq: Generated<string>;
}

export interface RunnersTables {
  cp_runners: RunnersTable;
  cp_profile_templates: ProfileTemplatesTable;
}

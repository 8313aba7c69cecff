import { z } from 'zod';
import { DeploymentSpecSchema } from './managed-runner';
import { WarmPoolSchema } from './warm-pools';
import { RoleSchema } from './enums';

/**
 * What the control plane publishes to other processes in its Postgres database: versioned views
 * (and one lookup function) created by its migrations, each with exactly the columns one reader
 * needs. Readers connect with their own database roles, which may read these and nothing else of
 * the control plane's (see the control plane's README, "Database roles").
 *
 * A published relation never changes shape: a reader that needs other columns gets a new version
 * (`_v2`) beside the old one, which stays until no deployed reader uses it. The control plane's
 * test `published-views.spec.ts` compares every relation below, column by column (name and
 * Postgres type, in order), with what its migrations create.
 */

/** Postgres types as `format_type()` names them. */
export type PgType = 'uuid' | 'text' | 'integer' | 'bigint' | 'xid8' | 'jsonb' | 'boolean';

/** One column: its Postgres type, and the zod schema of the value `pg` returns for it. */
export interface PublishedColumn<S extends z.ZodType = z.ZodType> {
  pgType: PgType;
  schema: S;
}

const col = <S extends z.ZodType>(pgType: PgType, schema: S): PublishedColumn<S> => ({ pgType, schema });
/** `pg` returns uuid, xid8 and (in the event store's pools) int8 as decimal strings. */
const uuid = (): PublishedColumn<z.ZodString> => col('uuid', z.string());
const text = (): PublishedColumn<z.ZodString> => col('text', z.string());
const integer = (): PublishedColumn<z.ZodNumber> => col('integer', z.number().int());
const bigintString = (): PublishedColumn<z.ZodString> => col('bigint', z.string().regex(/^\d+$/));
const xid8 = (): PublishedColumn<z.ZodString> => col('xid8', z.string().regex(/^\d+$/));

type Columns = Record<string, PublishedColumn>;
type RowShape<C extends Columns> = { [K in keyof C]: C[K]['schema'] };

export interface PublishedRelation<C extends Columns> {
  /** Name in the control plane's schema (`public`). */
  name: string;
  kind: 'view' | 'function';
  /** Arguments of a function, in order. */
  args: readonly { name: string; pgType: PgType }[];
  /** Result columns, in order: the contract test compares them with the database's. */
  columns: C;
  /** Parses one row as `pg` returns it. */
  row: z.ZodObject<RowShape<C>>;
}

function published<C extends Columns>(name: string, kind: 'view' | 'function', columns: C, args: { name: string; pgType: PgType }[] = []): PublishedRelation<C> {
  const shape = Object.fromEntries(Object.entries(columns).map(([k, c]) => [k, c.schema])) as RowShape<C>;
  return { name, kind, args, columns, row: z.object(shape) };
}

/** A stored policy document (validated when it was written); null = the platform default. */
const StoredPolicyJson = z.record(z.string(), z.unknown()).nullable();

/**
 * `cp_runners_v1`, read by each cluster's controller: the desired state of the runners of its
 * own cluster (row-level security shows a controller's role no other cluster's rows).
 */
export const CP_RUNNERS_V1 = published('cp_runners_v1', 'view', {
  uid: uuid(),
  organization_id: text(),
  runner_id: text(),
  cluster_id: text(),
  zone: text(),
  runner_group_id: text(),
  install_status: text(),
  target_revision: integer(),
  target_image: text(),
  deployment_spec: col('jsonb', DeploymentSpecSchema),
  policy: col('jsonb', StoredPolicyJson),
  policy_etag: text(),
});
export type CpRunnerV1 = z.infer<typeof CP_RUNNERS_V1.row>;

/**
 * `cp_runners_v2`, read by each cluster's controller: `cp_runners_v1` plus the runner's warm
 * pools (`spec.warmPools`, checked against its policy when written; `[]` when none), which the
 * controller writes into the runner's config file beside the policy.
 */
export const CP_RUNNERS_V2 = published('cp_runners_v2', 'view', {
  ...CP_RUNNERS_V1.columns,
  warm_pools: col('jsonb', z.array(WarmPoolSchema)),
});
export type CpRunnerV2 = z.infer<typeof CP_RUNNERS_V2.row>;

/**
 * `cp_runner_log_v1`, read by each cluster's controller: the runner events of its own cluster,
 * as positions in the event log and the runner they concern, without their payloads (a
 * controller re-reads the runner's row instead). Deletions reach it too: the cluster of a
 * runner stream is recorded when the runner is created and kept after it is removed.
 */
export const CP_RUNNER_LOG_V1 = published('cp_runner_log_v1', 'view', {
  global_position: bigintString(),
  transaction_id: xid8(),
  runner_uid: uuid(),
});
export type CpRunnerLogV1 = z.infer<typeof CP_RUNNER_LOG_V1.row>;

/**
 * `cp_runner_policies_v1`, read by the gateway: each runner's policy and its etag, trusted by
 * placement when the runner's heartbeat reports the same etag.
 */
export const CP_RUNNER_POLICIES_V1 = published('cp_runner_policies_v1', 'view', {
  organization_id: text(),
  runner_id: text(),
  policy: col('jsonb', StoredPolicyJson),
  policy_etag: text(),
});
export type CpRunnerPolicyV1 = z.infer<typeof CP_RUNNER_POLICIES_V1.row>;

/**
 * `cp_token_principal_v1(token_hash)`, called by the gateway: the live token with that hash
 * (see `hashApiToken`) as the principal it authenticates, or no row (unknown, revoked, or its
 * organization gone). The gateway's role may call it but not read the token table: it can check
 * a token it was handed, never list or copy tokens.
 */
export const CP_TOKEN_PRINCIPAL_V1 = published(
  'cp_token_principal_v1',
  'function',
  { token_id: uuid(), organization_id: uuid(), role: col('text', RoleSchema) },
  [{ name: 'token_hash', pgType: 'text' }],
);
export type CpTokenPrincipalV1 = z.infer<typeof CP_TOKEN_PRINCIPAL_V1.row>;

/** Every published relation, for the contract test. */
export const PUBLISHED_RELATIONS: readonly PublishedRelation<Columns>[] = [CP_RUNNERS_V1, CP_RUNNERS_V2, CP_RUNNER_LOG_V1, CP_RUNNER_POLICIES_V1, CP_TOKEN_PRINCIPAL_V1];

/** The controller's view of the database (a kysely table map: column types as `pg` returns them). */
export interface ControllerReadModels {
  cp_runners_v1: z.input<typeof CP_RUNNERS_V1.row>;
  cp_runners_v2: z.input<typeof CP_RUNNERS_V2.row>;
  cp_runner_log_v1: z.input<typeof CP_RUNNER_LOG_V1.row>;
}

/** The gateway's view of the control plane's relations (a kysely table map). */
export interface GatewayReadModels {
  cp_runner_policies_v1: z.input<typeof CP_RUNNER_POLICIES_V1.row>;
}

/**
 * The schema the gateway's own tables live in, owned by the gateway's role (created for it by
 * the control plane's `db-access gateway` command): the gateway writes nothing outside it.
 */
export const GATEWAY_DB_SCHEMA = 'gateway';

import { Kysely, PostgresDialect, type ColumnType, type Generated } from 'kysely';
import { Pool, types } from 'pg';
import { GATEWAY_DB_SCHEMA, type GatewayReadModels } from '@paddock/contracts';

// int8 (state_sequence) as a JS number: sequences are microsecond clocks, well inside 2^53.
types.setTypeParser(20, (v) => Number(v));

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Json<T> = ColumnType<T, string, string>;

export interface PlacementVerdictRow {
  runnerId: string;
  admitted: boolean | null;
  violations: { field: string; rule: string; description: string }[];
  /** `policy-unknown`: the runner's policy could not be fetched; the runner itself decided. */
  note?: string;
}

export interface PlacementRecord {
  decidedAt: string;
  candidates: string[];
  verdicts: PlacementVerdictRow[];
  attempts: { runnerId: string; outcome: string; code?: string; message?: string }[];
  winner: string | null;
}

export interface GwSandboxesTable {
  id: string;
  organization_id: string;
  request_id: string | null;
  request_fingerprint: string;
  spec: Json<unknown>;
  tags: ColumnType<string[], string[] | undefined, string[]>;
  state: string;
  state_reason: string | null;
  message: string | null;
  exit_code: number | null;
  state_sequence: Generated<number>;
  runner_id: string;
  runner_group_id: Generated<string>;
  placement: Json<PlacementRecord>;
  effective: Json<Record<string, unknown> | null> | null;
  create_attempts: Generated<number>;
  runner_acknowledged: Generated<boolean>;
  delete_requested_at: Timestamp | null;
  delete_grace_seconds: Generated<number>;
  logs_deleted_at: Generated<Date | null>;
  create_time: Timestamp;
  start_time: Timestamp | null;
  end_time: Timestamp | null;
  updated_at: Timestamp;
}

/**
 * The gateway's tables (in its own schema, `gateway`) and the control plane's published views it
 * may read (`public`, contracts in `@paddock/contracts`). Its database role can read nothing else
 * of the control plane's and write nothing outside its schema.
 */
export interface GatewayDatabase extends GatewayReadModels {
  gw_sandboxes: GwSandboxesTable;
  gw_fs_snapshots: GwFsSnapshotsTable;
}

export interface GwFsSnapshotsTable {
  id: string;
  organization_id: string;
  source_sandbox_id: string;
  source_volume_name: string;
  source_runner_id: string;
  trigger: string;
  state: string;
  state_reason: string | null;
  size_bytes: ColumnType<string, number | undefined, number>;
  object_bucket: Generated<string>;
  request_id: string | null;
  request_fingerprint: string | null;
  create_time: Timestamp;
  complete_time: Timestamp | null;
  updated_at: Timestamp;
}

/**
 * Unqualified names resolve in the gateway's schema first, then in `public` (the control plane's
 * published views): the gateway's SQL never names a schema.
 */
export const GATEWAY_SEARCH_PATH = `${GATEWAY_DB_SCHEMA},public`;

/** The pg pool behind each gateway database handle (the hot path's prepared statements run on it). */
const pools = new WeakMap<Kysely<GatewayDatabase>, Pool>();

export function createGatewayDb(databaseUrl: string, max = 10): Kysely<GatewayDatabase> {
  const pool = new Pool({ connectionString: databaseUrl, max, application_name: 'paddock-gateway', options: `-c search_path=${GATEWAY_SEARCH_PATH}` });
  const db = new Kysely<GatewayDatabase>({ dialect: new PostgresDialect({ pool }) });
  pools.set(db, pool);
  return db;
}

/** The pool `createGatewayDb` made `db` with; undefined for a handle made otherwise. */
export function gatewayPoolOf(db: Kysely<GatewayDatabase>): Pool | undefined {
  return pools.get(db);
}

import { CompiledQuery, type Kysely, type RawBuilder } from 'kysely';
import type { Pool } from 'pg';
import { gatewayPoolOf, type GatewayDatabase } from './database';

/** Stands for the parameter at `index` of a batch's flattened row values while its SQL is compiled. */
class Slot {
  constructor(readonly index: number) {}
}

/** Batches of up to this many rows run as named (server-side prepared) statements; bigger ones unnamed. */
const MAX_NAMED_ROWS = 8;

export interface PreparedBatchSpec<I> {
  /** Prefix of the prepared statements' names (one per row count): unique per statement. */
  name: string;
  /** Parameters of one row, in the order `sql` places them. */
  width: number;
  /** The row's parameter values, `width` of them. */
  values(item: I): unknown[];
  /** The statement for rows whose parameters are the given placeholders (`row[i]` = the i-th value). */
  sql(rows: unknown[][]): RawBuilder<unknown>;
}

/**
 * A multi-row statement of the hot path (a GroupCommit's), compiled once per row count instead of
 * on every call: kysely's query building and compilation cost about as much gateway CPU as the
 * rest of the statement's work. Batches of a few rows, the common case, run as named prepared
 * statements on the pool's connections, so the long SQL text is neither serialized again nor
 * parsed again by Postgres; bigger batches, rare and each of one row count, send the cached text
 * unnamed. The statement names the columns it returns (no `*`): a prepared statement's result
 * columns are fixed when it is parsed, which Postgres may refuse to change under it ("cached plan
 * must not change result type") once a newer gateway's migration adds a column.
 *
 * Without the pool behind `db` (see `gatewayPoolOf`) the cached text goes through kysely.
 */
export class PreparedBatch<I> {
  private readonly compiled = new Map<number, { text: string; parameters: readonly unknown[] }>();

  private readonly pool: Pool | undefined;

  constructor(
    private readonly db: Kysely<GatewayDatabase>,
    private readonly spec: PreparedBatchSpec<I>,
  ) {
    this.pool = gatewayPoolOf(db);
  }

  async run<R>(items: I[]): Promise<R[]> {
    const n = items.length;
    const { text, parameters } = this.compile(n);
    const flat = items.flatMap((i) => this.spec.values(i));
    const values = parameters.map((p) => (p instanceof Slot ? flat[p.index] : p));
    if (!this.pool) return (await this.db.executeQuery<R>(CompiledQuery.raw(text, values))).rows;
    const res = await this.pool.query<R & object>(n <= MAX_NAMED_ROWS ? { name: `${this.spec.name}_${n}`, text, values } : { text, values });
    return res.rows;
  }

  private compile(n: number): { text: string; parameters: readonly unknown[] } {
    let c = this.compiled.get(n);
    if (!c) {
      const w = this.spec.width;
      const rows = Array.from({ length: n }, (_, r) => Array.from({ length: w }, (_, i) => new Slot(r * w + i)));
      const q = this.spec.sql(rows).compile(this.db);
      c = { text: q.sql, parameters: q.parameters };
      this.compiled.set(n, c);
    }
    return c;
  }
}

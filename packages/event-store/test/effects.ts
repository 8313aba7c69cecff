import { sql, type Kysely, type Transaction } from 'kysely';
import type { RecordedEvent } from '../src';

/**
 * A deliberately NON-idempotent effect (a counter and a running sum per stream), so a
 * double-applied or lost event shows up as a difference from the fold of the log.
 */
export async function createEffectsTable(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE effects (stream_id text PRIMARY KEY, n int NOT NULL, total bigint NOT NULL)`.execute(
    db,
  );
}

export async function applyEffects(
  trx: Transaction<unknown>,
  events: RecordedEvent[],
): Promise<void> {
  for (const e of events) {
    const v = (e.data as { v?: number }).v ?? 0;
    await sql`INSERT INTO effects VALUES (${e.streamId}, 1, ${v})
              ON CONFLICT (stream_id) DO UPDATE SET n = effects.n + 1, total = effects.total + ${v}`.execute(
      trx,
    );
  }
}

/** effects table vs a fold of every event in the log, as comparable sorted rows. */
export async function effectsVersusFold(
  db: Kysely<unknown>,
): Promise<{ effects: string[]; fold: string[] }> {
  const effects = await sql<{
    r: string;
  }>`SELECT stream_id || ':' || n || ':' || total AS r FROM effects ORDER BY stream_id`.execute(db);
  const fold = await sql<{ r: string }>`
    SELECT stream_id || ':' || count(*) || ':' || sum((message_data->>'v')::bigint) AS r
      FROM es_messages GROUP BY stream_id ORDER BY stream_id`.execute(db);
  return { effects: effects.rows.map((x) => x.r), fold: fold.rows.map((x) => x.r) };
}

/** Records every checkpoint move, to prove the checkpoint never goes backwards. */
export async function auditCheckpoints(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE checkpoint_moves (old_tx xid8, old_gp bigint, new_tx xid8, new_gp bigint, owner text)`.execute(
    db,
  );
  await sql`
    CREATE FUNCTION audit_checkpoint() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO checkpoint_moves VALUES (OLD.transaction_id, OLD.global_position, NEW.transaction_id, NEW.global_position, NEW.owner);
      RETURN NEW;
    END $$`.execute(db);
  await sql`CREATE TRIGGER audit_checkpoint BEFORE UPDATE OF transaction_id, global_position ON es_processors
            FOR EACH ROW EXECUTE FUNCTION audit_checkpoint()`.execute(db);
}

export async function checkpointRegressions(
  db: Kysely<unknown>,
): Promise<{ moves: number; regressions: number }> {
  const { rows } = await sql<{ moves: string; regressions: string }>`
    SELECT count(*) AS moves,
           count(*) FILTER (WHERE (new_tx, new_gp) < (old_tx, old_gp)) AS regressions
      FROM checkpoint_moves`.execute(db);
  return { moves: Number(rows[0]?.moves ?? 0), regressions: Number(rows[0]?.regressions ?? 0) };
}

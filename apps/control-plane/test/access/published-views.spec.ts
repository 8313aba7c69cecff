import { sql, type Kysely } from 'kysely';
import { PUBLISHED_RELATIONS } from '@paddock/contracts';
import { createPostgresDb } from '@paddock/event-store';
import { newTestDatabase } from '../support/app';

interface Column {
  name: string;
  type: string;
}

async function viewColumns(db: Kysely<unknown>, name: string): Promise<{ kind: string; securityInvoker: boolean; columns: Column[] }> {
  const rel = await sql<{ kind: string; options: string[] | null }>`
    SELECT relkind::text AS kind, reloptions AS options FROM pg_class WHERE oid = to_regclass(${name})`.execute(db);
  const cols = await sql<Column>`
    SELECT attname AS name, format_type(atttypid, atttypmod) AS type FROM pg_attribute
     WHERE attrelid = to_regclass(${name}) AND attnum > 0 AND NOT attisdropped ORDER BY attnum`.execute(db);
  const r = rel.rows[0];
  return { kind: r?.kind ?? 'missing', securityInvoker: (r?.options ?? []).includes('security_invoker=true'), columns: cols.rows };
}

async function functionSignature(db: Kysely<unknown>, name: string): Promise<{ count: number; definer: boolean; args: Column[]; columns: Column[] }> {
  const { rows } = await sql<{ names: string[]; modes: string[]; types: string[]; definer: boolean }>`
    SELECT proargnames AS names, proargmodes::text[] AS modes,
           ARRAY(SELECT format_type(t, NULL) FROM unnest(proallargtypes) t) AS types, prosecdef AS definer
      FROM pg_proc WHERE proname = ${name} AND pronamespace = 'public'::regnamespace`.execute(db);
  const p = rows[0];
  const all = (p?.names ?? []).map((n, i) => ({ name: n, type: p?.types[i] ?? '?', mode: p?.modes[i] ?? '?' }));
  const pick = (mode: string): Column[] => all.filter((a) => a.mode === mode).map(({ name, type }) => ({ name, type }));
  return { count: rows.length, definer: p?.definer ?? false, args: pick('i'), columns: pick('t') };
}

/**
 * The relations the control plane publishes, exactly as `@paddock/contracts` declares them: a
 * migration that renames, retypes, adds or drops a column of one fails the test named after it.
 */
describe('published read models match their contracts (@paddock/contracts published-views)', () => {
  let db: Kysely<unknown>;
  let release: () => Promise<void>;

  beforeAll(async () => {
    const t = await newTestDatabase();
    release = t.release;
    db = createPostgresDb<unknown>(t.url, { max: 1 });
  });

  afterAll(async () => {
    await db?.destroy();
    await release?.();
  });

  for (const rel of PUBLISHED_RELATIONS) {
    const expected = Object.entries(rel.columns).map(([name, c]) => ({ name, type: c.pgType }));
    if (rel.kind === 'view') {
      it(`${rel.name} has exactly the columns of its contract (names and types, in order) and is a security_invoker view`, async () => {
        const got = await viewColumns(db, rel.name);
        expect(got.columns).toEqual(expected);
        expect(got).toMatchObject({ kind: 'v', securityInvoker: true });
      });
    } else {
      it(`${rel.name}(${rel.args.map((a) => a.name).join(', ')}) returns exactly the columns of its contract and runs with its owner's rights`, async () => {
        const got = await functionSignature(db, rel.name);
        expect(got.count).toBe(1);
        expect(got.args).toEqual(rel.args.map((a) => ({ name: a.name, type: a.pgType })));
        expect(got.columns).toEqual(expected);
        expect(got.definer).toBe(true);
      });
    }
  }
});

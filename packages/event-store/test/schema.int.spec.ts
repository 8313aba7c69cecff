import { sql } from 'kysely';
import { migrateEventStore } from '../src';
import { usePostgres } from './support';

const pg = usePostgres();

describe('store schema 0001_event_store', () => {
  it('matches the snapshot: tables, columns, types, defaults, constraints and indexes', async () => {
    const { db } = await pg.fresh();
    const columns = await sql<{
      table_name: string;
      column_name: string;
      data_type: string;
      is_nullable: string;
      column_default: string | null;
    }>`
      SELECT table_name, column_name, data_type, is_nullable, column_default
        FROM information_schema.columns
       WHERE table_schema = 'public' AND table_name LIKE 'es\\_%'
       ORDER BY table_name, ordinal_position`.execute(db);
    const constraints = await sql<{ conname: string; def: string }>`
      SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
       WHERE conrelid::regclass::text LIKE 'es\\_%' ORDER BY conname`.execute(db);
    const indexes = await sql<{ indexdef: string }>`
      SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename LIKE 'es\\_%' ORDER BY indexname`.execute(
      db,
    );
    const migrations = await sql<{
      name: string;
    }>`SELECT name FROM event_store_migration ORDER BY name`.execute(db);

    expect(migrations.rows.map((r) => r.name)).toEqual(['0001_event_store']);
    expect(
      columns.rows.map(
        (c) =>
          `${c.table_name}.${c.column_name} ${c.data_type}${c.is_nullable === 'NO' ? ' not null' : ''}${c.column_default ? ` default ${c.column_default}` : ''}`,
      ),
    ).toMatchSnapshot();
    expect(constraints.rows.map((c) => `${c.conname}: ${c.def}`)).toMatchSnapshot();
    expect(indexes.rows.map((i) => i.indexdef)).toMatchSnapshot();
    // xid8 is what makes the log tail safe; dropping it would be a silent correctness bug.
    expect(
      columns.rows.find((c) => c.table_name === 'es_messages' && c.column_name === 'transaction_id')
        ?.data_type,
    ).toBe('xid8');
  });

  it('migrating twice is a no-op and never touches an app migration table', async () => {
    const { db } = await pg.fresh();
    await migrateEventStore(db);
    const tables = await sql<{
      t: string;
    }>`SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`.execute(db);
    expect(tables.rows.map((r) => r.t)).toEqual([
      'es_idempotency',
      'es_messages',
      'es_processors',
      'es_streams',
      'event_store_migration',
      'event_store_migration_lock',
    ]);
  });
});

import { Client } from 'pg';

/**
 * Creates the database named in `url` if it does not exist, by connecting to the server's
 * `postgres` maintenance database. Lets a dev start work against a bare server.
 */
export async function ensureDatabaseExists(url: string): Promise<boolean> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!name) throw new Error(`DATABASE_URL names no database: ${url}`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return false;
    try {
      await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
    } catch (e) {
      // Another replica may have won the race; that is fine.
      if ((e as { code?: string }).code !== '42P04') throw e;
      return false;
    }
    return true;
  } finally {
    await client.end();
  }
}

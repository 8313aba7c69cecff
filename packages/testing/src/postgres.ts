import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from './ports';

export interface ThrowawayPostgres {
  /** Connection string of the `postgres` maintenance database. */
  readonly adminUrl: string;
  readonly port: number;
  /** Connection string for a database of the given name on this server. */
  urlFor(database: string): string;
  /** Creates a database, optionally as a copy of a template database. Returns its URL. */
  createDatabase(name: string, template?: string): Promise<string>;
  stop(): void;
  /** Immediate shutdown, as after a crash; `start()` brings the same cluster back. */
  crash(): void;
  start(): void;
}

function pgBinDir(): string {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) {
    throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql; apt-get install postgresql');
  }
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  if (!versions[0]) throw new Error('no initdb found under /usr/lib/postgresql/*/bin');
  return join(base, versions[0], 'bin');
}

/** initdb refuses to run as root, so as root every server command runs as the postgres user. */
function asServerUser(cmd: string, args: string[]): string[] {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  return isRoot ? ['runuser', '-u', 'postgres', '--', cmd, ...args] : [cmd, ...args];
}

function run(argv: string[]): void {
  const [cmd, ...args] = argv;
  const r = spawnSync(cmd as string, args, { encoding: 'utf8' });
  if (r.status !== 0) {
    throw new Error(`${argv.join(' ')} failed (${r.status}): ${r.stderr || r.stdout}`);
  }
}

/**
 * Starts a private Postgres cluster on a free loopback port, with fsync off (tests only),
 * trust auth and its own socket directory. Never touches the machine's own cluster.
 */
export async function startPostgres(opts: { port?: number; settings?: Record<string, string> } = {}): Promise<ThrowawayPostgres> {
  const bin = pgBinDir();
  const dir = mkdtempSync(join(tmpdir(), 'paddock-pg-'));
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  run(asServerUser(join(bin, 'initdb'), ['-D', data, '--auth=trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C.UTF-8']));
  const port = opts.port ?? (await freePort());
  const settings: Record<string, string> = {
    listen_addresses: '127.0.0.1',
    fsync: 'off',
    full_page_writes: 'off',
    max_connections: '300',
    ...opts.settings,
  };
  const pgOpts = [`-p ${port}`, `-k ${dir}`, ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`)].join(' ');
  const start = (): void =>
    run(asServerUser(join(bin, 'pg_ctl'), ['-D', data, '-o', pgOpts, '-l', join(dir, 'pg.log'), '-w', 'start']));
  const stopWith = (mode: 'fast' | 'immediate'): void => {
    spawnSync(asServerUser(join(bin, 'pg_ctl'), ['-D', data, '-m', mode, 'stop'])[0] as string,
      asServerUser(join(bin, 'pg_ctl'), ['-D', data, '-m', mode, 'stop']).slice(1), { encoding: 'utf8' });
  };
  start();
  const urlFor = (db: string): string => `postgres://postgres@127.0.0.1:${port}/${db}`;
  let stopped = false;
  const cleanup = (): void => {
    if (stopped) return;
    stopped = true;
    stopWith('immediate');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', cleanup);
  return {
    adminUrl: urlFor('postgres'),
    port,
    urlFor,
    async createDatabase(name, template) {
      const c = new Client({ connectionString: urlFor('postgres') });
      await c.connect();
      try {
        const ident = (s: string): string => `"${s.replace(/"/g, '""')}"`;
        await c.query(`CREATE DATABASE ${ident(name)}${template ? ` TEMPLATE ${ident(template)}` : ''}`);
      } finally {
        await c.end();
      }
      return urlFor(name);
    },
    stop: cleanup,
    crash: () => stopWith('immediate'),
    start,
  };
}

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './app-process';

/** The control plane's compiled `db-access` command (tests that use it build the control plane). */
export const DB_ACCESS_ENTRY = join(REPO_ROOT, 'apps', 'control-plane', 'dist', 'db-access.js');

/**
 * Runs the control plane's `db-access` command as the database administrator `adminUrl` (the
 * test server's superuser), as an operator would; resolves with the connection string it prints.
 */
function dbAccess(adminUrl: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [DB_ACCESS_ENTRY, ...args], { env: { ...process.env, DATABASE_URL: adminUrl }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const url = out.trim().split('\n').pop();
      if (code === 0 && url) resolve(url);
      else reject(new Error(`db-access ${args.join(' ')} failed (${code}): ${err}`));
    });
  });
}

/** The gateway's own database role (and schema) on the database of `adminUrl`; its connection string. */
export function provisionGatewayRole(adminUrl: string): Promise<string> {
  return dbAccess(adminUrl, ['gateway']);
}

/**
 * The database role of one cluster's controller (its own cluster's rows only, writes nothing);
 * its connection string. `organizationId` defaults to the database's only organization.
 */
export function provisionControllerRole(adminUrl: string, clusterName: string, organizationId?: string): Promise<string> {
  return dbAccess(adminUrl, ['controller', '--cluster', clusterName, ...(organizationId ? ['--organization', organizationId] : [])]);
}

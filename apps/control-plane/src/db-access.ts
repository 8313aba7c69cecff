import { parseArgs } from 'node:util';
import type { Kysely } from 'kysely';
import { createPostgresDb } from '@paddock/event-store';
import { ensureDatabaseExists } from './db/create-database';
import { migrateControlPlane } from './db/migrations';
import { listAccessRoles, provisionControllerLogin, provisionGatewayRole, revokeControllerLogin } from './db/access/provision';

const USAGE = `Usage: node apps/control-plane/dist/db-access.js <command> [options]

Creates the database roles of the gateway and of each cluster's controller, and prints the new
role's connection string on stdout (run again to rotate its password). Run it as a database
administrator: DATABASE_URL (or --database-url) names the installation's database and a role
that may create roles and owns the control plane's tables (or a superuser). It creates the
database and runs the control plane's migrations first if needed.

Commands:
  gateway                                           the gateway's role
  controller --cluster NAME [--organization ID]     the role of one cluster's controller
  revoke-controller --cluster NAME [--organization ID]
  list                                              the installation's roles

--organization defaults to the installation's only organization.`;

function fail(message: string): never {
  process.stderr.write(`db-access: ${message}\n`);
  process.exit(1);
}

async function run(command: string, admin: Kysely<unknown>, adminUrl: string, values: { cluster?: string; organization?: string }): Promise<void> {
  const cluster = (): { clusterName: string; organizationId?: string } => {
    if (!values.cluster) fail(`${command} needs --cluster NAME`);
    return { clusterName: values.cluster, ...(values.organization ? { organizationId: values.organization } : {}) };
  };
  switch (command) {
    case 'gateway': {
      const login = await provisionGatewayRole(admin, adminUrl);
      process.stderr.write(`gateway role ${login.role} ready (new password set)\n`);
      process.stdout.write(`${login.databaseUrl}\n`);
      return;
    }
    case 'controller': {
      const login = await provisionControllerLogin(admin, adminUrl, cluster());
      process.stderr.write(`controller role ${login.role} ready for cluster "${values.cluster}" of organization ${login.organizationId} (new password set)\n`);
      process.stdout.write(`${login.databaseUrl}\n`);
      return;
    }
    case 'revoke-controller': {
      const role = await revokeControllerLogin(admin, cluster());
      process.stderr.write(`controller role ${role} dropped\n`);
      return;
    }
    case 'list': {
      for (const r of await listAccessRoles(admin)) {
        const bound = r.clusterName ? ` cluster=${r.clusterName} organization=${r.organizationId}` : '';
        process.stdout.write(`${r.kind.padEnd(12)} ${r.role}${r.exists ? '' : ' (missing)'}${bound}\n`);
      }
      return;
    }
    default:
      fail(`unknown command "${command}"\n\n${USAGE}`);
  }
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      'database-url': { type: 'string' },
      cluster: { type: 'string' },
      organization: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const command = positionals[0];
  if (values.help || !command) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const adminUrl = values['database-url'] ?? process.env.DATABASE_URL;
  if (!adminUrl) fail('DATABASE_URL (or --database-url) is required: the connection string of a database administrator');
  await ensureDatabaseExists(adminUrl);
  const admin = createPostgresDb<unknown>(adminUrl, { max: 1, applicationName: 'paddock-db-access' });
  try {
    await migrateControlPlane(admin);
    await run(command, admin, adminUrl, values);
  } finally {
    await admin.destroy();
  }
}

main().catch((e: unknown) => fail(e instanceof Error ? e.message : String(e)));

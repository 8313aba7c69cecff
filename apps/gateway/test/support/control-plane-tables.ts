import { randomBytes, randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { hashToken } from '../../src/auth/token-authenticator';
import type { GatewayDatabase } from '../../src/db/database';

/**
 * The control plane's tables the gateway reads, with the columns the control plane's own
 * migration declares (tokens, organizations, and the runner read model's policy columns).
 * Tests create them here instead of importing the control-plane app.
 */
export async function createControlPlaneTables(db: Kysely<GatewayDatabase>): Promise<void> {
  await sql`
    CREATE TABLE IF NOT EXISTS cp_organizations (
      id uuid PRIMARY KEY, name text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`.execute(db);
  await sql`
    CREATE TABLE IF NOT EXISTS cp_api_tokens (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES cp_organizations (id) ON DELETE CASCADE,
      name text NOT NULL,
      role text NOT NULL CHECK (role IN ('SANDBOX_ADMIN', 'SANDBOX_USER')),
      token_hash text NOT NULL UNIQUE,
      token_prefix text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz,
      last_used_at timestamptz)`.execute(db);
  await sql`
    CREATE TABLE IF NOT EXISTS cp_runners (
      uid uuid PRIMARY KEY,
      organization_id uuid NOT NULL,
      runner_id text NOT NULL,
      policy jsonb,
      policy_etag text)`.execute(db);
}

export async function createOrganization(db: Kysely<GatewayDatabase>, name: string): Promise<string> {
  const id = randomUUID();
  await sql`INSERT INTO cp_organizations (id, name) VALUES (${id}::uuid, ${name})`.execute(db);
  return id;
}

export async function issueToken(
  db: Kysely<GatewayDatabase>,
  organizationId: string,
  role: 'SANDBOX_ADMIN' | 'SANDBOX_USER' = 'SANDBOX_USER',
): Promise<{ token: string; id: string }> {
  const token = `pdk_${randomBytes(32).toString('base64url')}`;
  const id = randomUUID();
  await sql`
    INSERT INTO cp_api_tokens (id, organization_id, name, role, token_hash, token_prefix)
    VALUES (${id}::uuid, ${organizationId}::uuid, 'test', ${role}, ${hashToken(token)}, ${token.slice(0, 8)})`.execute(db);
  return { token, id };
}

export async function revokeToken(db: Kysely<GatewayDatabase>, id: string): Promise<void> {
  await sql`UPDATE cp_api_tokens SET revoked_at = now() WHERE id = ${id}::uuid`.execute(db);
}

/** What the control plane's runner read model would hold for a runner and its policy. */
export async function upsertRunnerPolicy(
  db: Kysely<GatewayDatabase>,
  organizationId: string,
  runnerId: string,
  policy: unknown,
  policyEtag: string | null,
): Promise<void> {
  await sql`DELETE FROM cp_runners WHERE runner_id = ${runnerId}`.execute(db);
  await sql`
    INSERT INTO cp_runners (uid, organization_id, runner_id, policy, policy_etag)
    VALUES (${randomUUID()}::uuid, ${organizationId}::uuid, ${runnerId}, ${policy === null ? null : JSON.stringify(policy)}::jsonb, ${policyEtag})`.execute(db);
}

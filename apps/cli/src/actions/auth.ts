import type { Ctx } from '../context';
import { configPath, DEFAULT_CONTROL_PLANE_URL, DEFAULT_GATEWAY_URL, deleteConfig, loadConfig, saveConfig } from '../config';
import { UsageError } from '../errors';
import { ApiClient } from '../http';
import { age, parseOutputFormat, renderTable, toJson, toYaml } from '../output';

/** `GET /v1/auth/whoami` as the control plane answers it. */
interface WhoAmI {
  organization: { id: string; name: string; createTime?: string };
  role: string;
  token: { id: string; name: string };
  operator: boolean;
}

export async function login(ctx: Ctx, token: string | undefined, opts: { controlPlaneUrl?: string; gatewayUrl?: string }): Promise<void> {
  const t = (token ?? (await ctx.promptSecret('Paste your Paddock API token: '))).trim();
  if (!t) throw new UsageError('no token given');
  const cpUrl = (opts.controlPlaneUrl ?? ctx.flags.controlPlaneUrl ?? loadConfig(ctx.io.env).controlPlaneUrl ?? DEFAULT_CONTROL_PLANE_URL).replace(/\/+$/, '');
  const gwUrl = (opts.gatewayUrl ?? ctx.flags.gatewayUrl ?? loadConfig(ctx.io.env).gatewayUrl ?? DEFAULT_GATEWAY_URL).replace(/\/+$/, '');
  // Verify before saving: a typo should fail here, not on the next command.
  const who = await new ApiClient(cpUrl, t).request<WhoAmI>('logging in', 'GET', '/v1/auth/whoami');
  const path = saveConfig({ token: t, controlPlaneUrl: cpUrl, gatewayUrl: gwUrl }, ctx.io.env);
  ctx.out(`Logged in to ${cpUrl} as ${who.role} of organization ${who.organization.name || who.organization.id}; saved to ${path}`);
}

export async function whoami(ctx: Ctx, opts: { output?: string }): Promise<void> {
  const s = ctx.settings();
  const who = await ctx.controlPlane().request<WhoAmI>('reading identity', 'GET', '/v1/auth/whoami');
  const out = { ...who, controlPlaneUrl: s.controlPlaneUrl, gatewayUrl: s.gatewayUrl, tokenSource: s.tokenSource };
  if (opts.output === 'json') return ctx.out(toJson(out));
  if (opts.output === 'yaml') return ctx.out(toYaml(out));
  if (opts.output === 'name') return ctx.out(`organization/${who.organization.id}`);
  ctx.out(
    [
      `Organization:   ${who.organization.name ? `${who.organization.name} (${who.organization.id})` : who.organization.id}`,
      `Role:           ${who.role}`,
      `Token:          ${who.token.name || who.token.id}`,
      `Control plane:  ${s.controlPlaneUrl}`,
      `Gateway:        ${s.gatewayUrl}`,
      `Credentials:    ${s.tokenSource}`,
    ].join('\n'),
  );
}

export function logout(ctx: Ctx): void {
  ctx.out(deleteConfig(ctx.io.env) ? `Logged out (removed ${configPath(ctx.io.env)})` : 'Not logged in');
}

/** A token as `GET /v1/tokens` lists it (never the secret). */
interface TokenView {
  id: string;
  name: string;
  role: string;
  tokenPrefix: string;
  createTime: string;
  revokeTime: string | null;
  lastUseTime: string | null;
}

const TOKEN_ROLES = ['SANDBOX_ADMIN', 'SANDBOX_USER'];

/** `cwic auth token create NAME --role ROLE`: the secret is printed once, on stdout alone. */
export async function createToken(ctx: Ctx, name: string, opts: { role?: string; output?: string }): Promise<void> {
  const role = (opts.role ?? 'SANDBOX_USER').toUpperCase();
  if (!TOKEN_ROLES.includes(role)) throw new UsageError(`--role must be one of ${TOKEN_ROLES.join(', ')} (got "${opts.role ?? ''}")`);
  const issued = await ctx.controlPlane().request<TokenView & { token: string }>(`creating token ${name}`, 'POST', '/v1/tokens', { name, role });
  if (opts.output === 'json') return ctx.out(toJson(issued));
  if (opts.output === 'yaml') return ctx.out(toYaml(issued));
  ctx.out(issued.token);
  ctx.note(`Token ${issued.name} (${issued.role}, id ${issued.id}) created. It is shown only now: store it somewhere safe.`);
}

export async function listTokens(ctx: Ctx, opts: { output?: string; all?: boolean }): Promise<void> {
  const { tokens } = await ctx.controlPlane().request<{ tokens: TokenView[] }>('listing tokens', 'GET', '/v1/tokens');
  const shown = opts.all ? tokens : tokens.filter((t) => !t.revokeTime);
  const format = parseOutputFormat(opts.output);
  if (format === 'json') return ctx.out(toJson(shown));
  if (format === 'yaml') return ctx.out(toYaml(shown));
  if (format === 'name') return ctx.out(shown.map((t) => `token/${t.id}`).join('\n'));
  if (shown.length === 0) return void ctx.io.stderr('No tokens found.\n');
  const rows = shown.map((t) => [t.id, t.name, t.role, `${t.tokenPrefix}…`, age(t.createTime), t.lastUseTime ? age(t.lastUseTime) : 'never', ...(opts.all ? [t.revokeTime ? age(t.revokeTime) : '-'] : [])]);
  ctx.out(renderTable(['id', 'name', 'role', 'prefix', 'age', 'last used', ...(opts.all ? ['revoked'] : [])], rows));
}

export async function revokeTokens(ctx: Ctx, ids: string[]): Promise<void> {
  for (const id of ids.map((i) => i.replace(/^token\//, ''))) {
    const t = await ctx.controlPlane().request<TokenView>(`revoking token ${id}`, 'DELETE', `/v1/tokens/${encodeURIComponent(id)}`);
    ctx.out(`token/${t.id} (${t.name}) revoked`);
  }
}

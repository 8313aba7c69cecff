import type { Ctx } from '../context';
import { configPath, DEFAULT_CONTROL_PLANE_URL, DEFAULT_GATEWAY_URL, deleteConfig, loadConfig, saveConfig } from '../config';
import { UsageError } from '../errors';
import { ApiClient } from '../http';
import { toJson, toYaml } from '../output';

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

import type { Command } from 'commander';
import { DEFAULT_CONTROL_PLANE_URL, DEFAULT_GATEWAY_URL } from '../config';
import type { Ctx } from '../context';
import { authActions } from '../lazy';

/** Declarations only: the work is in `../actions/auth`, loaded when a command runs (see `../lazy`). */
export function registerAuthCommands(program: Command, ctx: Ctx): void {
  const auth = program.command('auth').description('log in and out');
  auth
    .command('login')
    .argument('[TOKEN]', 'API token (prompted for when omitted)')
    .description('store a token and the API URLs in the cwic config file (mode 0600)')
    .option('--control-plane-url <URL>', `control plane URL (default ${DEFAULT_CONTROL_PLANE_URL})`)
    .option('--gateway-url <URL>', `gateway URL (default ${DEFAULT_GATEWAY_URL})`)
    .action((token: string | undefined, o: { controlPlaneUrl?: string; gatewayUrl?: string }) => authActions().then((a) => a.login(ctx, token, o)));
  auth
    .command('whoami')
    .description('show the organization and role of the current token')
    .option('-o, --output <FORMAT>', 'json|yaml|name')
    .action((o: { output?: string }) => authActions().then((a) => a.whoami(ctx, o)));
  auth
    .command('logout')
    .description('forget the stored token')
    .action(() => authActions().then((a) => a.logout(ctx)));

  const token = auth.command('token').description("the organization's API tokens (admins)");
  token
    .command('create')
    .argument('<NAME>', 'what the token is for')
    .description('mint a token; its secret is printed once, on stdout')
    .option('--role <ROLE>', 'SANDBOX_USER (create and use sandboxes) or SANDBOX_ADMIN (also runners, policies, tokens)', 'SANDBOX_USER')
    .option('-o, --output <FORMAT>', 'json|yaml (default: the secret alone)')
    .action((name: string, o: { role?: string; output?: string }) => authActions().then((a) => a.createToken(ctx, name, o)));
  token
    .command('ls')
    .alias('list')
    .description('list tokens (never their secrets)')
    .option('-a, --all', 'include revoked tokens')
    .option('-o, --output <FORMAT>', 'table|json|yaml|name', 'table')
    .action((o: { output?: string; all?: boolean }) => authActions().then((a) => a.listTokens(ctx, o)));
  token
    .command('revoke')
    .argument('<TOKEN-ID...>', 'token ids (from `cwic auth token ls`)')
    .description('revoke tokens; they stop working everywhere within the token cache TTL')
    .action((ids: string[]) => authActions().then((a) => a.revokeTokens(ctx, ids)));
}

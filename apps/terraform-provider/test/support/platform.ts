import { rmSync } from 'node:fs';
import type { ManagedRunner } from '@paddock/contracts';
import { sh, startPlatform, type Platform } from '@paddock/e2e/platform';
import { terraformHome, Workspace, type TerraformHome } from './terraform';

/**
 * One platform per spec file (Postgres, NATS, the control plane, the gateway, optionally a
 * controller with the local driver), started as the end-to-end suites start it, and a Terraform
 * home whose workspaces talk to it through the provider's environment variables.
 */
export interface ProviderFixture {
  p: Platform;
  home: TerraformHome;
  workspace(name: string, env?: NodeJS.ProcessEnv): Workspace;
  runner(id: string): Promise<{ status: number; json: ManagedRunner }>;
  runnerIds(): Promise<string[]>;
  cwic(script: string): { code: number; stdout: string; stderr: string };
  stop(): Promise<void>;
}

export async function startFixture(): Promise<ProviderFixture> {
  const p = await startPlatform();
  const home = terraformHome();
  const login = sh(p, `cwic auth login "$TOKEN" --control-plane-url ${p.cp.url} --gateway-url ${p.gw.url}`);
  if (login.code !== 0) throw new Error(`cwic auth login failed: ${login.stderr}`);
  return {
    p,
    home,
    workspace: (name, env = {}) => new Workspace(home, name, { ...home.env, COREWEAVE_API_TOKEN: p.token, COREWEAVE_API_ENDPOINT: p.cp.url, ...env }),
    runner: (id) => p.cpApi<ManagedRunner>('GET', `/v1/sandbox/managedRunners/${id}`),
    runnerIds: async () => (await p.cpApi<{ managedRunners: ManagedRunner[] }>('GET', '/v1/sandbox/managedRunners')).json.managedRunners.map((r) => r.identity.runnerId),
    cwic: (script) => sh(p, script),
    async stop() {
      await p.stop();
      rmSync(home.home, { recursive: true, force: true });
    },
  };
}

/** `terraform output runner_status` as the seed prints it: `  key = value` lines inside braces. */
export function parseOutputObject(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/^\s*"?([a-z_]+)"?\s*=\s*"?([^"\n]*)"?\s*$/gm)) out[m[1] ?? ''] = m[2] ?? '';
  return out;
}

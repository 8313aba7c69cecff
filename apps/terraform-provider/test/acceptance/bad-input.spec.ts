import { inject } from 'vitest';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '@paddock/testing';
import { startFixture, type ProviderFixture } from '../support/platform';
import { SEED_MAIN_TF, type ShellResult, type Workspace } from '../support/terraform';

/**
 * Bad input through the real terraform binary: each case fails with a diagnostic that names
 * the attribute (Terraform then quotes its line), and nothing is written, neither to the API
 * nor to the Terraform state.
 */
describe('bad input fails with a diagnostic naming the attribute, and writes nothing', () => {
  let f: ProviderFixture;
  let clusterId = '';

  beforeAll(async () => {
    f = await startFixture();
    const cluster = await f.p.cpApi<{ id: string }>('POST', '/v1/clusters', { name: 'tf-bad-input', zone: 'us-east-04a' });
    expect(cluster.status).toBeLessThan(300);
    clusterId = cluster.json.id;
  }, 400_000);

  afterAll(async () => {
    await f?.stop();
  });

  const seeded = (name: string, mainTf = SEED_MAIN_TF, env: NodeJS.ProcessEnv = {}, zone = 'us-east-04a'): Workspace => {
    const ws = f.workspace(name, env);
    ws.seed({ runnerId: `bad-${name}`, clusterId, zone });
    ws.write('main.tf', mainTf);
    ws.ok('terraform init');
    return ws;
  };

  /** Nothing reached the API, and the Terraform state holds no resource. */
  const nothingWritten = async (ws: Workspace): Promise<void> => {
    expect(await f.runnerIds()).toEqual([]);
    const state = join(ws.dir, 'terraform.tfstate');
    if (existsSync(state)) expect(ws.ok('terraform state list').stdout.trim()).toBe('');
  };

  const failsWith = (r: ShellResult, summary: string, ...phrases: string[]): void => {
    expect(r.code, r.text).toBe(1);
    expect(r.flat).toContain(`Error: ${summary}`);
    for (const p of phrases) expect(r.flat).toContain(p);
  };

  it('an upper-case zone: "zone must be lowercase" on the zone line, at plan', async () => {
    const ws = seeded('zone', SEED_MAIN_TF.replace('zone       = lower(var.zone)', 'zone       = var.zone'), {}, 'US-EAST-04A');
    const plan = ws.sh('terraform plan -out=runner.tfplan');
    failsWith(plan, 'Invalid zone', 'zone must be lowercase: "US-EAST-04A" is not', 'with coreweave_sandbox_managed_runner.runner', 'zone = var.zone');
    // Terraform saves the errored plan, but refuses to apply it.
    failsWith(ws.sh('terraform apply runner.tfplan'), 'Cannot apply incomplete plan');
    await nothingWritten(ws);
  });

  it('an unknown release channel: refused on spec.release_channel already by terraform validate', async () => {
    const ws = seeded('channel', SEED_MAIN_TF.replace('RELEASE_CHANNEL_STABLE', 'RELEASE_CHANNEL_BETA'));
    failsWith(ws.sh('terraform validate'), 'Invalid release channel', 'spec.release_channel must be RELEASE_CHANNEL_STABLE or RELEASE_CHANNEL_RAPID; got "RELEASE_CHANNEL_BETA"', 'spec = {', 'release_channel = "RELEASE_CHANNEL_BETA"');
    failsWith(ws.sh('terraform plan'), 'Invalid release channel');
    await nothingWritten(ws);
  });

  it('a policy over 256 KiB: "policy exceeds 256 KiB limit" on policy', async () => {
    const big = SEED_MAIN_TF.replace(
      '      lifecycle = { default_lifetime_seconds = 3600 }',
      '      lifecycle = { default_lifetime_seconds = 3600 }\n      image     = { allowed_images = flatten([for i in range(100) : [for j in range(70) : "registry.example.com/team-${i}/image-${j}:v1.2.3"]]) }',
    );
    const ws = seeded('policy', big);
    failsWith(ws.sh('terraform plan'), 'Policy too large', 'policy exceeds 256 KiB limit: the encoded policy is', 'the limit is 262144 bytes', 'policy = {');
    await nothingWritten(ws);
  });

  it('no token: "Missing API token" on the provider\'s token, naming COREWEAVE_API_TOKEN', async () => {
    const ws = seeded('token', SEED_MAIN_TF, { COREWEAVE_API_TOKEN: '' });
    failsWith(ws.sh('terraform plan'), 'Missing API token', 'export COREWEAVE_API_TOKEN', 'provider "coreweave"');
    await nothingWritten(ws);
  });

  it('an unreachable endpoint: the apply fails naming the endpoint setting, and the state stays empty', async () => {
    const port = await freePort();
    const ws = seeded('endpoint', SEED_MAIN_TF, { COREWEAVE_API_ENDPOINT: `http://127.0.0.1:${port}/` });
    ws.ok('terraform plan -out=runner.tfplan');
    failsWith(
      ws.sh('terraform apply runner.tfplan'),
      'Cannot reach the CoreWeave API',
      `the API at http://127.0.0.1:${port}/ did not answer`,
      'ECONNREFUSED',
      "Check the provider's endpoint (the provider argument endpoint, or COREWEAVE_API_ENDPOINT",
      'Nothing was changed.',
    );
    await nothingWritten(ws);
  });

  it('a token the API refuses: the apply fails saying so, and the state stays empty', async () => {
    const ws = seeded('refused', SEED_MAIN_TF, { COREWEAVE_API_TOKEN: 'pdk_not-a-real-token-000000' });
    ws.ok('terraform plan -out=runner.tfplan');
    failsWith(ws.sh('terraform apply runner.tfplan'), 'The CoreWeave API refused the token', 'Check the token in COREWEAVE_API_TOKEN');
    await nothingWritten(ws);
  });

  it('`pnpm terraform:install` puts the provider in the implied local mirror of $HOME, executable, for an offline terraform init', () => {
    // The root script ran with HOME at a temporary directory, before the spec files (global setup).
    const install = inject('rootInstall');
    const dir = join(install.home, '.terraform.d', 'plugins', 'registry.terraform.io', 'coreweave', 'coreweave');
    expect(readdirSync(dir)).toEqual(['0.26.0']);
    const plugin = join(dir, '0.26.0', 'linux_amd64', 'terraform-provider-coreweave_v0.26.0');
    expect(install.stdout).toContain(`Installed terraform-provider-coreweave 0.26.0 at\n  ${plugin}\n`);
    expect(statSync(plugin).mode & 0o111).toBe(0o111);
    expect(readFileSync(plugin, 'utf8').split('\n', 1)[0]).toBe(`#!${process.execPath}`);
    const ws = f.workspace('install', { HOME: install.home, TF_CLI_CONFIG_FILE: join(f.home.home, '.terraformrc') });
    ws.write('main.tf', SEED_MAIN_TF);
    expect(ws.ok('terraform init').text).toContain('Installing coreweave/coreweave v0.26.0...');
    expect(ws.read('.terraform.lock.hcl')).toContain('provider "registry.terraform.io/coreweave/coreweave"');
  });
});

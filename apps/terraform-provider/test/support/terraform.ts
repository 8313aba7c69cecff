import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '@paddock/testing';

/**
 * Terraform as a user runs it, but never in the real home: each test file gets a temporary
 * HOME (where the provider is installed, in Terraform's implied local mirror) and an empty CLI
 * configuration file, and each scenario a working directory. Commands go through /bin/sh
 * exactly as written in the docs.
 */
export const APP_ROOT = join(REPO_ROOT, 'apps', 'terraform-provider');
export const EXAMPLE_DIR = join(APP_ROOT, 'examples', 'managed-runner');
export const SEED_MAIN_TF = readFileSync(join(EXAMPLE_DIR, 'main.tf'), 'utf8');

export interface ShellResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout and stderr, colours removed: what a person reads. */
  text: string;
  /** The same with Terraform's diagnostic box borders removed and line wrapping undone, for phrase matching. */
  flat: string;
}

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

export interface TerraformHome {
  home: string;
  /** Environment every command runs with (no API settings: each workspace adds its own). */
  env: NodeJS.ProcessEnv;
  pluginPath: string;
}

/** A temporary HOME with the provider installed by the same program `pnpm terraform:install` runs. */
export function terraformHome(): TerraformHome {
  const home = mkdtempSync(join(tmpdir(), 'paddock-tf-home-'));
  writeFileSync(join(home, '.terraformrc'), '');
  // Terraform's and the plugin's temporary files (the plugin's socket) stay inside the home,
  // which the fixture deletes, even when a process is killed before it cleans up.
  mkdirSync(join(home, 'tmp'));
  const env: NodeJS.ProcessEnv = {
    TMPDIR: join(home, 'tmp'),
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    TF_CLI_CONFIG_FILE: join(home, '.terraformrc'),
    CHECKPOINT_DISABLE: '1',
    TF_IN_AUTOMATION: '1',
    LANG: 'C.UTF-8',
  };
  const r = spawnSync(process.execPath, [join(APP_ROOT, 'dist', 'install.js')], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`provider install failed: ${r.stderr}`);
  const pluginPath = /\n\s+(\S+)\n/.exec(r.stdout)?.[1] ?? '';
  return { home, env, pluginPath };
}

export class Workspace {
  readonly dir: string;
  constructor(
    readonly home: TerraformHome,
    name: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.dir = join(home.home, 'work', name);
    mkdirSync(this.dir, { recursive: true });
  }

  write(file: string, content: string): void {
    writeFileSync(join(this.dir, file), content);
  }

  read(file: string): string {
    return readFileSync(join(this.dir, file), 'utf8');
  }

  /** The seed's configuration verbatim, and its tfvars with the placeholders filled in. */
  seed(values: { runnerId: string; clusterId: string; zone: string }): void {
    copyFileSync(join(EXAMPLE_DIR, 'main.tf'), join(this.dir, 'main.tf'));
    this.write(
      'terraform.tfvars',
      readFileSync(join(EXAMPLE_DIR, 'terraform.tfvars'), 'utf8').replace('[RUNNER-ID]', values.runnerId).replace('[CLUSTER-ID]', values.clusterId).replace('[ZONE]', values.zone),
    );
  }

  /** One shell command line, e.g. `terraform plan -out=runner.tfplan`. */
  sh(script: string, extraEnv: NodeJS.ProcessEnv = {}): ShellResult {
    const r = spawnSync('/bin/sh', ['-c', script], { cwd: this.dir, env: { ...this.env, ...extraEnv }, encoding: 'utf8', timeout: 240_000 });
    const stdout = r.stdout ?? '';
    const stderr = r.stderr ?? '';
    const text = `${stdout}\n${stderr}`.replace(ANSI, '');
    return { code: r.status ?? -1, stdout, stderr, text, flat: text.replace(/^[│╷╵]\s?/gm, '').replace(/\s+/g, ' ') };
  }

  /** Runs a command that must succeed; fails the test with Terraform's own words otherwise. */
  ok(script: string, extraEnv: NodeJS.ProcessEnv = {}): ShellResult {
    const r = this.sh(script, extraEnv);
    if (r.code !== 0) throw new Error(`\`${script}\` exited ${r.code}:\n${r.text}`);
    return r;
  }

  /** `terraform show -json PLAN`: the machine-readable plan. */
  planJson(planFile: string): TerraformPlanJson {
    return JSON.parse(this.ok(`terraform show -json ${planFile}`).stdout) as TerraformPlanJson;
  }

  /** The state as `terraform show -json` prints it (values of sensitive attributes included). */
  stateJson(): TerraformStateJson {
    return JSON.parse(this.ok('terraform show -json').stdout) as TerraformStateJson;
  }
}

export interface ResourceChangeJson {
  address: string;
  change: { actions: string[]; before: Record<string, unknown> | null; after: Record<string, unknown> | null; after_unknown?: Record<string, unknown>; replace_paths?: unknown[][] };
}
export interface TerraformPlanJson {
  resource_changes?: ResourceChangeJson[];
  output_changes?: Record<string, { actions: string[] }>;
}
export interface TerraformStateJson {
  values?: { root_module?: { resources?: { address: string; values: Record<string, unknown> }[] } };
}

import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { PROVIDER_ADDRESS, PROVIDER_VERSION } from './version';

/**
 * `pnpm terraform:install`: places the bundled provider in Terraform's implied local mirror,
 * `$HOME/.terraform.d/plugins/registry.terraform.io/coreweave/coreweave/<version>/<os>_<arch>/`,
 * so that `terraform init` of a configuration asking for `coreweave/coreweave` `~> 0.26` installs
 * it without any registry. The installed file is the bundle behind a shebang naming the Node.js
 * that ran the install.
 */
const ARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', ia32: '386', arm: 'arm' };

export function pluginDirectory(home: string, platform = process.platform, arch = process.arch): string {
  const { hostname, namespace, type } = PROVIDER_ADDRESS;
  return join(home, '.terraform.d', 'plugins', hostname, namespace, type, PROVIDER_VERSION, `${platform}_${ARCH[arch] ?? arch}`);
}

export const BUNDLE = join(__dirname, 'bundle', 'terraform-provider-coreweave.cjs');

/** Writes the executable atomically (temp file, then rename) and returns its path. */
export function installProvider(opts: { home: string; bundle?: string; node?: string }): string {
  const bundle = opts.bundle ?? BUNDLE;
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: build the provider first (pnpm --filter @paddock/terraform-provider build)`);
  const dir = pluginDirectory(opts.home);
  mkdirSync(dir, { recursive: true });
  const target = join(dir, `terraform-provider-${PROVIDER_ADDRESS.type}_v${PROVIDER_VERSION}`);
  const tmp = `${target}.tmp-${process.pid}`;
  writeFileSync(tmp, `#!${opts.node ?? process.execPath}\n${readFileSync(bundle, 'utf8')}`, { mode: 0o755 });
  chmodSync(tmp, 0o755);
  renameSync(tmp, target);
  return target;
}

if (require.main === module) {
  const home = process.env.HOME || homedir();
  const target = installProvider({ home });
  process.stdout.write(
    `Installed terraform-provider-coreweave ${PROVIDER_VERSION} at\n  ${target}\n` +
      `A configuration with source = "coreweave/coreweave", version = "~> 0.26" now installs it with: terraform init\n`,
  );
}

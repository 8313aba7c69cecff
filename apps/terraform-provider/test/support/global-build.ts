import { join } from 'node:path';
import { REPO_ROOT, buildPackages } from '@paddock/testing';

/**
 * Builds, once per test run and before any spec file starts, what the acceptance specs run: the
 * bundled provider Terraform executes, and the platform's compiled apps (control plane, gateway,
 * controller, runner, and cwic for out-of-band edits).
 */
export default function setup(): void {
  const app = (name: string, entry: string): string => join(REPO_ROOT, 'apps', name, 'dist', entry);
  buildPackages(
    ['@paddock/terraform-provider', '@paddock/control-plane', '@paddock/gateway', '@paddock/controller', '@paddock/runner', '@paddock/cli'],
    [
      app('terraform-provider', join('bundle', 'terraform-provider-coreweave.cjs')),
      app('terraform-provider', 'install.js'),
      app('control-plane', 'main.js'),
      app('gateway', 'main.js'),
      app('controller', 'main.js'),
      app('runner', 'main.js'),
      app('cli', 'cli.js'),
    ],
  );
}

import { join } from 'node:path';
import { REPO_ROOT, buildPackages } from '@paddock/testing';

/**
 * Builds the compiled apps the end-to-end specs run (the CLI as users run it, the control plane,
 * the gateway and the runner) once per test run, before any spec file starts: spec files run in
 * parallel and must not rebuild the same `dist/` directories at the same time.
 */
export default function setup(): void {
  const app = (name: string, entry: string): string => join(REPO_ROOT, 'apps', name, 'dist', entry);
  buildPackages(
    ['@paddock/cli', '@paddock/control-plane', '@paddock/gateway', '@paddock/runner'],
    [app('cli', 'cli.js'), app('control-plane', 'main.js'), app('gateway', 'main.js'), app('runner', 'main.js')],
  );
}

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { REPO_ROOT, buildPackages } from '@paddock/testing';

declare module 'vitest' {
  export interface ProvidedContext {
    /** What `pnpm terraform:install` did with HOME pointed at a temporary directory. */
    rootInstall: { home: string; code: number; stdout: string; stderr: string };
  }
}

/**
 * Runs once per test run, before any spec file starts (spec files run in parallel and must not
 * rebuild the same `dist/` while another reads it):
 * - builds the platform's compiled apps the acceptance specs run (control plane, gateway,
 *   controller, runner, and cwic for out-of-band edits);
 * - runs the root `pnpm terraform:install`, which builds the provider and installs it, into a
 *   temporary HOME; `bad-input.spec.ts` checks what it installed.
 */
export default function setup(project: TestProject): () => void {
  const app = (name: string, entry: string): string => join(REPO_ROOT, 'apps', name, 'dist', entry);
  buildPackages(
    ['@paddock/control-plane', '@paddock/gateway', '@paddock/controller', '@paddock/runner', '@paddock/cli'],
    [app('control-plane', 'main.js'), app('gateway', 'main.js'), app('controller', 'main.js'), app('runner', 'main.js'), app('cli', 'cli.js')],
  );
  const home = mkdtempSync(join(tmpdir(), 'paddock-tf-install-'));
  const r = spawnSync('pnpm', ['terraform:install'], { cwd: REPO_ROOT, env: { ...process.env, HOME: home, TURBO_TELEMETRY_DISABLED: '1' }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`pnpm terraform:install failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  project.provide('rootInstall', { home, code: r.status, stdout: r.stdout, stderr: r.stderr });
  return () => rmSync(home, { recursive: true, force: true });
}

import { createRequire } from 'node:module';
import type * as ContractsModule from '@paddock/contracts';
import type * as PolicyModule from '@paddock/policy';
import type * as PolicyDocumentModule from '@paddock/policy/document';
import type * as SdkModule from '@paddock/sdk';
import type * as YamlModule from 'yaml';
import type * as AuthActions from './actions/auth';
import type * as ClusterActions from './actions/cluster';
import type * as PolicyActions from './actions/policy';
import type * as RunnerActions from './actions/runner';
import type * as SandboxActions from './actions/sandbox';
import type * as SecretStoreActions from './actions/secret-store';

/**
 * Startup cost: `cwic --help` must cost little over a bare `node` (target: within 50 ms). What
 * prints help is only commander and the command declarations (`src/commands/*`); what a command
 * does (`src/actions/*`), and everything that brings in (yaml, the zod-based contracts, the policy
 * engine, the SDK, node:http, node:crypto), loads when that command runs.
 */
export const nodeRequire = createRequire(__filename);

/**
 * The compiled CLI loads its own modules with a synchronous `require`: a dynamic `import()` of a
 * CommonJS file starts Node's ESM loader, ~15 ms on every command. From the TypeScript sources
 * (vitest, tsx) `require` cannot load `.ts`, so `import()` it is.
 */
const compiled = __filename.endsWith('.js');

function lazyModule<T>(path: string, viaImport: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => (loaded ??= compiled ? new Promise<T>((resolve) => resolve(nodeRequire(path) as T)) : viaImport());
}

export const authActions = lazyModule<typeof AuthActions>('./actions/auth', () => import('./actions/auth.js'));
export const clusterActions = lazyModule<typeof ClusterActions>('./actions/cluster', () => import('./actions/cluster.js'));
export const policyActions = lazyModule<typeof PolicyActions>('./actions/policy', () => import('./actions/policy.js'));
export const runnerActions = lazyModule<typeof RunnerActions>('./actions/runner', () => import('./actions/runner.js'));
export const sandboxActions = lazyModule<typeof SandboxActions>('./actions/sandbox', () => import('./actions/sandbox.js'));
export const secretStoreActions = lazyModule<typeof SecretStoreActions>('./actions/secret-store', () => import('./actions/secret-store.js'));

const contracts = lazyModule<typeof ContractsModule>('@paddock/contracts', () => import('@paddock/contracts'));

export async function loadCase(): Promise<{ snakeToCamelDeep: (v: unknown) => unknown; camelToSnakeDeep: (v: unknown) => unknown }> {
  const m = await contracts();
  return { snakeToCamelDeep: m.snakeToCamelDeep, camelToSnakeDeep: m.camelToSnakeDeep };
}

export const loadPolicyEngine = lazyModule<typeof PolicyModule>('@paddock/policy', () => import('@paddock/policy'));
export const loadPolicyDocument = lazyModule<typeof PolicyDocumentModule>('@paddock/policy/document', () => import('@paddock/policy/document'));
export const loadSdk = lazyModule<typeof SdkModule>('@paddock/sdk', () => import('@paddock/sdk'));

let yamlModule: typeof YamlModule | undefined;

/**
 * `yaml` is ~60 modules: loaded synchronously on first parse or print, never for `--help`.
 * (Synchronous so `toYaml`/`parseDocument` stay plain functions.)
 */
export function loadYaml(): typeof YamlModule {
  yamlModule ??= nodeRequire('yaml') as typeof YamlModule;
  return yamlModule;
}

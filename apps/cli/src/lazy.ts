import { createRequire } from 'node:module';
import type * as PolicyModule from '@paddock/policy';
import type * as YamlModule from 'yaml';

/**
 * Heavy modules load on first use only: `cwic --help` must cost little over a bare `node`
 * (zod-based contracts and the policy engine are not needed to print help).
 */
export async function loadCase(): Promise<{ snakeToCamelDeep: (v: unknown) => unknown; camelToSnakeDeep: (v: unknown) => unknown }> {
  const m = await import('@paddock/contracts');
  return { snakeToCamelDeep: m.snakeToCamelDeep, camelToSnakeDeep: m.camelToSnakeDeep };
}

type PolicyEngine = typeof PolicyModule;

export async function loadPolicyEngine(): Promise<PolicyEngine> {
  return import('@paddock/policy');
}

let yamlModule: typeof YamlModule | undefined;

/**
 * `yaml` is ~60 modules: loaded synchronously on first parse or print, never for `--help`.
 * (Synchronous so `toYaml`/`parseDocument` stay plain functions.)
 */
export function loadYaml(): typeof YamlModule {
  yamlModule ??= createRequire(__filename)('yaml') as typeof YamlModule;
  return yamlModule;
}

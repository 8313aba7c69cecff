/**
 * The v1 `updateMask` of `PATCH /v1/sandbox/managedRunners/{id}`: comma-separated field paths,
 * snake_case or camelCase per segment (`spec.release_channel` = `spec.releaseChannel`).
 *
 * Rules (where the product's documentation and its API description disagree, the documentation
 * wins: docs/adr/0003-documentation-over-api-reference.md):
 * - no mask, an empty mask or `*` alone: the whole mutable resource is replaced;
 * - mutable paths: {@link MANAGED_RUNNER_MUTABLE_PATHS};
 * - `profile_bindings` and `spec.allow_privileged_profile_annotations` live on v1beta2 only;
 * - immutable and output-only paths are refused by name;
 * - every refusal is `invalid_argument` naming each offending path, and nothing is changed.
 */
import { MANAGED_RUNNER_MUTABLE_PATHS, PaddockError, type FieldViolation, type ManagedRunnerMutablePath } from '@paddock/contracts';

export type MaskPlan = { mode: 'full'; paths: ManagedRunnerMutablePath[] } | { mode: 'paths'; paths: ManagedRunnerMutablePath[] };

const MUTABLE = new Set<string>(MANAGED_RUNNER_MUTABLE_PATHS);
const IMMUTABLE = new Set(['identity.runner_id', 'identity.cluster_id', 'identity', 'uid']);
const OUTPUT_ONLY = new Set([
  'identity.cluster_name',
  'etag',
  'install_status',
  'connection_status',
  'last_heartbeat_time',
  'active_revision',
  'target_revision',
  'update_available',
  'rollout_in_progress',
  'install_error',
  'using_default_policy',
  'create_time',
  'update_time',
  'deployment_spec',
  'management_mode',
  'active_config_version',
  'data_plane_status',
]);
/** Paths a v1 write refuses with a pointer to where they live instead. */
const LEGACY: Record<string, string> = {
  profile_bindings: 'profile_bindings is accepted only on the legacy v1beta2 surface; configure policy instead',
  'spec.allow_privileged_profile_annotations':
    'spec.allow_privileged_profile_annotations is accepted only on the legacy v1beta2 surface (PATCH /v1beta2/sandbox/managed-runners/{id}, managedSpec.allowPrivilegedProfileAnnotations)',
  managed_spec: 'managed_spec is the v1beta2 name of spec; use spec on v1',
};

/** Longest path echoed in a message; the violation's `field` always carries the whole path. */
const MESSAGE_PATH_LIMIT = 200;
const MAX_PATHS = 64;
/** No ManagedRunner path is longer or deeper; hostile masks are refused before any work on them. */
const MAX_PATH_LENGTH = 256;
const MAX_PATH_DEPTH = 8;

const camelToSnake = (segment: string): string => segment.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function shown(path: string): string {
  return path.length > MESSAGE_PATH_LIMIT ? `${path.slice(0, MESSAGE_PATH_LIMIT)}…` : path;
}

function violation(field: string, rule: string, description: string): FieldViolation {
  return { field, rule, description };
}

/** Why one normalized path is not accepted, or undefined when it is a mutable path. */
function refusal(raw: string, path: string): FieldViolation | undefined {
  if (MUTABLE.has(path)) return undefined;
  const name = shown(raw);
  const top = path.split('.')[0] ?? '';
  const legacyKey = Object.keys(LEGACY).find((k) => path === k || path.startsWith(`${k}.`));
  if (legacyKey) return violation(raw, 'legacy_v1beta2_only', `${name}: ${LEGACY[legacyKey] ?? ''}`);
  if (IMMUTABLE.has(path) || path.startsWith('identity.runner_id.') || path.startsWith('identity.cluster_id.')) {
    const hint = path === 'identity' ? '; name identity.zone or identity.runner_group_id' : '';
    return violation(raw, 'immutable', `${name} is immutable${hint}`);
  }
  if (OUTPUT_ONLY.has(path) || OUTPUT_ONLY.has(top) || path.startsWith('identity.cluster_name.')) {
    return violation(raw, 'output_only', `${name} is output only and cannot be updated`);
  }
  if (top === 'policy') {
    return violation(raw, 'whole_document_only', `${name}: the policy is replaced as a whole document; use the path policy`);
  }
  const parent = MANAGED_RUNNER_MUTABLE_PATHS.find((p) => path.startsWith(`${p}.`) && p !== 'spec');
  if (parent) return violation(raw, 'not_updatable_subpath', `${name}: ${parent} is replaced as a whole; name ${parent}`);
  return violation(raw, 'unknown_path', `${name} is not a known updatable path of ManagedRunner`);
}

/**
 * Parses a raw `updateMask` query value. Throws `invalid_argument` listing every bad path.
 * Duplicates collapse; order is kept.
 */
export function parseUpdateMask(raw: string | undefined): MaskPlan {
  if (raw === undefined || raw === '' || raw === '*') return { mode: 'full', paths: [...MANAGED_RUNNER_MUTABLE_PATHS] };
  const items = raw.split(',');
  const violations: FieldViolation[] = [];
  if (items.length > MAX_PATHS) {
    violations.push(violation('updateMask', 'max_paths', `updateMask names ${items.length} paths; at most ${MAX_PATHS} are accepted`));
  }
  const paths: ManagedRunnerMutablePath[] = [];
  for (const [i, item] of items.slice(0, MAX_PATHS).entries()) {
    const rawPath = item.trim();
    if (rawPath === '*') {
      violations.push(violation('*', 'wildcard_alone', '* replaces the whole resource and must be the only path in updateMask'));
      continue;
    }
    if (rawPath.length > MAX_PATH_LENGTH) {
      violations.push(violation(rawPath, 'max_length', `${shown(rawPath)} is longer than ${MAX_PATH_LENGTH} characters; it is not a ManagedRunner path`));
      continue;
    }
    const segments = rawPath.split('.', MAX_PATH_DEPTH + 1);
    if (segments.length > MAX_PATH_DEPTH) {
      violations.push(violation(rawPath, 'max_depth', `${shown(rawPath)} is deeper than ${MAX_PATH_DEPTH} segments; it is not a ManagedRunner path`));
      continue;
    }
    if (rawPath === '' || segments.some((s) => s === '')) {
      violations.push(violation(rawPath === '' ? `updateMask[${i}]` : rawPath, 'empty_segment', `updateMask[${i}] "${shown(rawPath)}" has an empty path segment`));
      continue;
    }
    const path = segments.map(camelToSnake).join('.');
    const bad = refusal(rawPath, path);
    if (bad) violations.push(bad);
    else if (!paths.includes(path as ManagedRunnerMutablePath)) paths.push(path as ManagedRunnerMutablePath);
  }
  if (violations.length > 0) {
    const first = violations[0]?.description ?? 'invalid updateMask';
    const more = violations.length > 1 ? ` (and ${violations.length - 1} more)` : '';
    const legacy = violations.every((v) => v.rule === 'legacy_v1beta2_only');
    const immutable = violations.every((v) => v.rule === 'immutable');
    const outputOnly = violations.every((v) => v.rule === 'output_only');
    throw new PaddockError('invalid_argument', `invalid updateMask: ${first}${more}`, {
      reason: legacy ? 'PADDOCK_LEGACY_FIELD' : immutable ? 'PADDOCK_IMMUTABLE_FIELD' : outputOnly ? 'PADDOCK_OUTPUT_ONLY_FIELD' : 'PADDOCK_VALIDATION_FAILED',
      violations,
    });
  }
  return { mode: 'paths', paths };
}

/** True when the plan writes `path` (directly or through a parent such as `spec`). */
export function planCovers(plan: MaskPlan, path: ManagedRunnerMutablePath): boolean {
  return plan.paths.some((p) => p === path || path.startsWith(`${p}.`));
}

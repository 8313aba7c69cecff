import { isRecord } from './input';

/**
 * Turning a user's patch document into an update mask + body (pure; unit-tested).
 *
 * `cwic sandbox runner edit -f` semantics (as the product's documentation and the cwic README describe them):
 * - only the paths the file names are updated; absent fields are left alone;
 * - an explicit `null` clears an optional setting (the path is in the mask, the body omits it);
 * - `spec.overrides`, `spec.maintenance_policy` and `policy` are replacement boundaries: the whole
 *   object is sent and replaces the server's;
 * - a policy update carries an etag (from the file, `--etag`, or a fresh read).
 * The document arrives already converted to camelCase.
 */

export interface PlannedPatch {
  mask: string[];
  body: Record<string, unknown>;
  /** The etag named in the document itself, if any. */
  etag?: string;
  /** Legacy `managed_spec` settings, sent to the v1beta2 surface. */
  legacyManagedSpec?: Record<string, unknown>;
  /** Identity fields that only identify the runner and must match it. */
  identityRefs: Record<string, unknown>;
}

const SPEC_PATHS: Record<string, string> = {
  releaseChannel: 'spec.release_channel',
  maintenancePolicy: 'spec.maintenance_policy',
  overrides: 'spec.overrides',
  enforceResourceLimits: 'spec.enforce_resource_limits',
  warmPools: 'spec.warm_pools',
};

/** Keys a read returns that a template round trip may carry; they are never patched. */
const OUTPUT_ONLY = new Set([
  'uid', 'installStatus', 'connectionStatus', 'lastHeartbeatTime', 'activeRevision', 'targetRevision',
  'updateAvailable', 'rolloutInProgress', 'installError', 'usingDefaultPolicy', 'createTime', 'updateTime',
  'deploymentSpec', 'managementMode', 'activeConfigVersion', 'dataPlaneStatus', 'warmPoolStatus',
]);

export function camelToSnakePath(path: string): string {
  return path
    .split('.')
    .map((seg) => seg.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`))
    .join('.');
}

export function planPatch(doc: Record<string, unknown>): PlannedPatch {
  const mask: string[] = [];
  const body: Record<string, unknown> = {};
  const identityRefs: Record<string, unknown> = {};
  const plan: PlannedPatch = { mask, body, identityRefs };
  for (const [key, value] of Object.entries(doc)) {
    if (key === 'etag') {
      if (typeof value === 'string' && value) plan.etag = value;
      continue;
    }
    if (OUTPUT_ONLY.has(key)) continue;
    if (key === 'managedSpec') {
      if (isRecord(value)) plan.legacyManagedSpec = value;
      continue;
    }
    if (key === 'displayName') {
      mask.push('display_name');
      if (value !== null) body.displayName = value;
      continue;
    }
    if (key === 'identity' && isRecord(value)) {
      const identity: Record<string, unknown> = {};
      for (const [ik, iv] of Object.entries(value)) {
        if (ik === 'zone' || ik === 'runnerGroupId') {
          mask.push(`identity.${camelToSnakePath(ik)}`);
          if (iv !== null) identity[ik] = iv;
        } else {
          identityRefs[ik] = iv;
          if (ik === 'runnerId') identity.runnerId = iv;
        }
      }
      body.identity = identity;
      continue;
    }
    if (key === 'spec') {
      if (value === null) {
        mask.push('spec');
        continue;
      }
      if (isRecord(value)) {
        const spec: Record<string, unknown> = {};
        for (const [sk, sv] of Object.entries(value)) {
          mask.push(SPEC_PATHS[sk] ?? `spec.${camelToSnakePath(sk)}`);
          if (sv !== null) spec[sk] = sv;
        }
        body.spec = spec;
      }
      continue;
    }
    // `policy` and anything else: named path, value sent as is (the server refuses unknown or
    // immutable paths by name, which is the message the user should see).
    mask.push(camelToSnakePath(key));
    if (value !== null) body[key] = value;
  }
  return plan;
}

/** Recursively drops null/undefined, empty arrays and empty objects; numeric strings become numbers. */
export function normalizeForCompare(v: unknown): unknown {
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v)) return Number(v);
  if (Array.isArray(v)) {
    const items = v.map(normalizeForCompare).filter((x) => x !== undefined);
    return items.length ? items : undefined;
  }
  if (isRecord(v)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const n = normalizeForCompare(v[k]);
      if (n !== undefined) out[k] = n;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return v;
}

export function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(normalizeForCompare(a)) === JSON.stringify(normalizeForCompare(b));
}

/** Reads the value at a snake_case mask path from a camelCase runner. */
export function valueAtMaskPath(runner: Record<string, unknown>, maskPath: string): unknown {
  let cur: unknown = runner;
  for (const seg of maskPath.split('.')) {
    const camel = seg.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
    if (!isRecord(cur)) return undefined;
    cur = cur[camel];
  }
  return cur;
}

export interface FieldDiff {
  path: string;
  before: unknown;
  after: unknown;
}

/** Which masked paths of a plan would actually change the given runner. */
export function changedPaths(plan: PlannedPatch, current: Record<string, unknown>): FieldDiff[] {
  const out: FieldDiff[] = [];
  for (const path of plan.mask) {
    const after = valueAtMaskPath(plan.body, path);
    const before = valueAtMaskPath(current, path);
    if (!sameValue(before, after)) out.push({ path, before, after });
  }
  return out;
}

import {
  POLICY_MAX_ENCODED_BYTES,
  POLICY_TOO_LARGE_MESSAGE,
  RUNNER_ID_PATTERN,
  RunnerSpecSchema,
  ZONE_PATTERN,
} from '@paddock/contracts';
import { validatePolicy } from '@paddock/policy';
import { Cron } from 'croner';
import { attr, isObjectValue, isWhollyKnown, type Value } from '../cty/value';
import { error, showPath, type AttributePath, type Diagnostic } from '../framework/diagnostics';
import { isJsonObjectText } from '../framework/json';
import { attributePathOf, splitApiPath } from '../framework/wire';
import { POLICY_ATTRIBUTES, SPEC_ATTRIBUTES } from './schema';
import { policyToApi, specToApi } from './state';

/**
 * Configuration checks run by `terraform validate` and again by `plan`, once variables are
 * known: the rules the API enforces, so that a bad value fails the plan with a diagnostic on its
 * own attribute instead of failing halfway through an apply. Values still unknown are skipped;
 * the API checks them again when they arrive.
 */
const RELEASE_CHANNELS = ['RELEASE_CHANNEL_STABLE', 'RELEASE_CHANNEL_RAPID'];

function checkIdentity(config: Value, out: Diagnostic[]): void {
  const runnerId = attr(config, 'runner_id');
  if (typeof runnerId === 'string' && !RUNNER_ID_PATTERN.test(runnerId)) {
    out.push(error('Invalid runner_id', `runner_id must be 1-63 lowercase letters, digits or dashes, starting and ending with a letter or digit; got ${JSON.stringify(runnerId)}.`, ['runner_id']));
  }
  const zone = attr(config, 'zone');
  if (typeof zone === 'string') {
    if (zone !== zone.toLowerCase()) {
      out.push(error('Invalid zone', `zone must be lowercase: ${JSON.stringify(zone)} is not. Write the zone in lower case, e.g. zone = lower(var.zone).`, ['zone']));
    } else if (!ZONE_PATTERN.test(zone)) {
      out.push(error('Invalid zone', `zone must contain only lowercase letters, digits and "-"; got ${JSON.stringify(zone)}.`, ['zone']));
    }
  }
  const clusterId = attr(config, 'cluster_id');
  if (clusterId === '') out.push(error('Invalid cluster_id', 'cluster_id must name the cluster (its UUID); it is empty.', ['cluster_id']));
}

function checkCron(expr: string, path: AttributePath, out: Diagnostic[]): void {
  let ok = expr.trim().split(/\s+/).length === 5;
  if (ok) {
    try {
      new Cron(expr, { paused: true, timezone: 'UTC' }).stop();
    } catch {
      ok = false;
    }
  }
  if (!ok) out.push(error('Invalid maintenance window', `${showPath(path)} must be a five-field cron expression in UTC, e.g. "0 2 * * SAT"; got ${JSON.stringify(expr)}.`, path));
}

function checkSpec(spec: Value, out: Diagnostic[]): void {
  if (!isObjectValue(spec)) return;
  const channel = spec.release_channel;
  if (typeof channel === 'string' && !RELEASE_CHANNELS.includes(channel)) {
    out.push(error('Invalid release channel', `spec.release_channel must be ${RELEASE_CHANNELS.join(' or ')}; got ${JSON.stringify(channel)}.`, ['spec', 'release_channel']));
  }
  const maintenance = attr(spec, 'maintenance_policy');
  const windows = attr(maintenance, 'windows');
  if (Array.isArray(windows)) {
    windows.forEach((w, i) => {
      const cron = attr(w, 'cron');
      if (typeof cron === 'string') checkCron(cron, ['spec', 'maintenance_policy', 'windows', i, 'cron'], out);
    });
  }
  const exclusions = attr(maintenance, 'exclusions');
  if (Array.isArray(exclusions)) {
    exclusions.forEach((x, i) => {
      const start = attr(x, 'start_time');
      const end = attr(x, 'end_time');
      if (typeof start === 'string' && typeof end === 'string' && Date.parse(end) <= Date.parse(start)) {
        out.push(error('Invalid maintenance exclusion', 'end_time must be after start_time.', ['spec', 'maintenance_policy', 'exclusions', i, 'end_time']));
      }
    });
  }
  const overrides = attr(spec, 'overrides');
  const scaling = attr(overrides, 'scaling');
  const min = attr(scaling, 'min_replicas');
  const max = attr(scaling, 'max_replicas');
  if (typeof min === 'number' && typeof max === 'number' && min > max) {
    out.push(error('Invalid scaling', `spec.overrides.scaling.min_replicas (${min}) must not exceed max_replicas (${max}).`, ['spec', 'overrides', 'scaling', 'min_replicas']));
  }
  const affinity = attr(overrides, 'affinity');
  if (typeof affinity === 'string' && !isJsonObjectText(affinity)) {
    out.push(error('Invalid affinity', 'spec.overrides.affinity must be a JSON-encoded Kubernetes Affinity object: write affinity = jsonencode({...}).', ['spec', 'overrides', 'affinity']));
  }
  if (!isWhollyKnown(spec)) return;
  // The shapes and formats (quantities, enums, ranges) come from the API's own schema.
  const parsed = RunnerSpecSchema.safeParse(specToApi(spec));
  if (parsed.success) return;
  for (const issue of parsed.error.issues) {
    if (issue.path[0] === 'releaseChannel') continue;
    const path: AttributePath = ['spec', ...attributePathOf(SPEC_ATTRIBUTES, issue.path.filter((p): p is string | number => typeof p !== 'symbol'))];
    out.push(error('Invalid runner spec', `${showPath(path)}: ${issue.message}.`, path));
  }
}

function checkPolicy(policy: Value, out: Diagnostic[]): void {
  if (!isObjectValue(policy) || !isWhollyKnown(policy)) return;
  const base = attr(policy, 'base');
  if (typeof base === 'string' && !isJsonObjectText(base)) {
    out.push(error('Invalid policy', 'policy.base must be a JSON object: write base = jsonencode({...}).', ['policy', 'base']));
    return;
  }
  const doc = policyToApi(policy);
  const size = Buffer.byteLength(JSON.stringify(doc), 'utf8');
  if (size > POLICY_MAX_ENCODED_BYTES) {
    out.push(error('Policy too large', `${POLICY_TOO_LARGE_MESSAGE}: the encoded policy is ${size} bytes, the limit is ${POLICY_MAX_ENCODED_BYTES} bytes (256 KiB).`, ['policy']));
    return;
  }
  const verdict = validatePolicy(doc);
  if (verdict.ok) return;
  for (const v of verdict.violations) {
    const path: AttributePath = ['policy', ...attributePathOf(POLICY_ATTRIBUTES, v.field === 'policy' ? [] : splitApiPath(v.field))];
    const description = v.description.startsWith(`${v.field}: `) ? v.description.slice(v.field.length + 2) : v.description;
    out.push(error('Invalid policy', `${showPath(path)}: ${description} (rule ${v.rule}).`, path));
  }
}

export function validateRunnerConfig(config: Value): Diagnostic[] {
  const out: Diagnostic[] = [];
  checkIdentity(config, out);
  checkSpec(attr(config, 'spec'), out);
  checkPolicy(attr(config, 'policy'), out);
  return out;
}

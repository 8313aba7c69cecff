/**
 * Turns v1 request bodies (camelCase JSON, or the snake_case spelling of the CLI's YAML) into
 * validated values for the domain commands. Every refusal is `invalid_argument` with one field
 * violation per broken rule; the message is the first violation's description, which for the
 * documented cases is exactly the documented string (`runner.identity.zone is required`, ...).
 */
import { Cron } from 'croner';
import { validationError, zodViolations } from '@paddock/kit';
import type { z } from 'zod';
import type {
  RunnerSpecSchema} from '@paddock/contracts';
import {
  CreateManagedRunnerBodySchema,
  DEFAULT_RUNNER_GROUP_ID,
  MANAGED_RUNNER_OUTPUT_ONLY_FIELDS,
  PaddockError,
  POLICY_MAX_ENCODED_BYTES,
  POLICY_TOO_LARGE_MESSAGE,
  REQUEST_ID_MAX_BYTES,
  RUNNER_ID_PATTERN,
  UpdateManagedRunnerBodySchema,
  snakeToCamelDeep,
  type FieldViolation,
  type StoredRunnerSpec,
} from '@paddock/contracts';
import { defaultRunnerSpec } from '../domain/runner.defaults';
import type { RunnerSettingsChange } from '../domain/runner.commands';
import { planCovers, type MaskPlan } from '../domain/update-mask';
import { validateRunnerPolicy, warmPoolViolations } from './policy-port';
import { unappliedSettingViolations } from './unapplied-settings';

export interface CreateRunnerInput {
  runnerId: string;
  zone: string;
  cluster: { clusterId?: string; clusterName?: string };
  runnerGroupId: string;
  displayName: string;
  spec: StoredRunnerSpec;
  policy: Record<string, unknown> | null;
  requestId: string | undefined;
}

export interface UpdateRunnerInput {
  settings: RunnerSettingsChange;
  policy?: { document: Record<string, unknown> | null; etag: string | undefined; explicit: boolean };
  /** `identity.runnerId` as sent in the body, checked against the runner in the path. */
  bodyRunnerId: string | undefined;
}

/** A body that failed its schema, its fields spelled as this snake_case API spells them (`runner.spec.maintenance_policy.windows[0].cron`). */
export function schemaRefusal(prefix: string, error: z.ZodError): PaddockError {
  return validationError(zodViolations(error, { prefix, snakeCase: true }), 'PADDOCK_VALIDATION_FAILED');
}

function invalid(violations: FieldViolation[]): PaddockError {
  return new PaddockError('invalid_argument', violations[0]?.description ?? 'invalid request', {
    reason: 'PADDOCK_VALIDATION_FAILED',
    violations,
  });
}

/** Request bodies must be JSON objects; output-only members a client echoes back are dropped. */
function normalizedObject(body: unknown, keep: readonly string[] = []): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw invalid([{ field: 'runner', rule: 'json_object', description: 'runner: the request body must be a ManagedRunner JSON object' }]);
  }
  const camel = snakeToCamelDeep(body) as Record<string, unknown>;
  for (const key of MANAGED_RUNNER_OUTPUT_ONLY_FIELDS) if (!keep.includes(key)) delete camel[key];
  return camel;
}

function specViolations(spec: z.infer<typeof RunnerSpecSchema>, prefix: string): FieldViolation[] {
  const out: FieldViolation[] = [];
  for (const [i, w] of (spec.maintenancePolicy?.windows ?? []).entries()) {
    const field = `${prefix}.maintenance_policy.windows[${i}].cron`;
    const fields = w.cron.trim().split(/\s+/);
    let ok = fields.length === 5;
    if (ok) {
      try {
        new Cron(w.cron, { paused: true, timezone: 'UTC' }).stop();
      } catch {
        ok = false;
      }
    }
    if (!ok) out.push({ field, rule: 'cron_5_field_utc', description: `${field} must be a valid five-field cron expression in UTC, e.g. "0 9 * * SAT"` });
  }
  for (const [i, x] of (spec.maintenancePolicy?.exclusions ?? []).entries()) {
    if (Date.parse(x.endTime) <= Date.parse(x.startTime)) {
      const field = `${prefix}.maintenance_policy.exclusions[${i}].end_time`;
      out.push({ field, rule: 'end_after_start', description: 'maintenance exclusion end_time must be after start_time' });
    }
  }
  const scaling = spec.overrides?.scaling;
  if (scaling?.minReplicas !== undefined && scaling.maxReplicas !== undefined && scaling.minReplicas > scaling.maxReplicas) {
    out.push({ field: `${prefix}.overrides.scaling.min_replicas`, rule: 'min_le_max', description: 'scaling min_replicas must not exceed max_replicas' });
  }
  out.push(...unappliedSettingViolations(spec, prefix));
  const affinity = spec.overrides?.affinity;
  if (affinity !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(affinity);
    } catch {
      parsed = undefined;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      out.push({ field: `${prefix}.overrides.affinity`, rule: 'json_object', description: `${prefix}.overrides.affinity must be a JSON-encoded Kubernetes affinity object` });
    }
  }
  return out;
}

/** Server defaults for every member the body leaves out. */
function resolvedSpec(spec: z.infer<typeof RunnerSpecSchema> | null | undefined): StoredRunnerSpec {
  const d = defaultRunnerSpec();
  if (!spec) return d;
  return {
    releaseChannel: spec.releaseChannel === 'RELEASE_CHANNEL_RAPID' ? 'RELEASE_CHANNEL_RAPID' : d.releaseChannel,
    maintenancePolicy: spec.maintenancePolicy ?? d.maintenancePolicy,
    overrides: spec.overrides ?? d.overrides,
    enforceResourceLimits: spec.enforceResourceLimits ?? d.enforceResourceLimits,
    warmPools: spec.warmPools ?? [],
  };
}

function zoneViolations(zone: string | undefined): FieldViolation[] {
  if (zone === undefined || zone.trim() === '') {
    return [{ field: 'runner.identity.zone', rule: 'required', description: 'runner.identity.zone is required' }];
  }
  if (zone !== zone.toLowerCase()) {
    return [{ field: 'runner.identity.zone', rule: 'lowercase', description: 'runner.identity.zone must be lowercase (zone must be lowercase)' }];
  }
  return [];
}

/** Validates a policy document: the encoded size cap first, then `validatePolicy`. */
function policyViolations(policy: Record<string, unknown>): { violations: FieldViolation[]; policy?: Record<string, unknown> } {
  const encoded = Buffer.byteLength(JSON.stringify(policy), 'utf8');
  if (encoded > POLICY_MAX_ENCODED_BYTES) {
    return {
      violations: [{ field: 'policy', rule: 'max_encoded_bytes', description: POLICY_TOO_LARGE_MESSAGE, requested: encoded, limit: POLICY_MAX_ENCODED_BYTES }],
    };
  }
  const verdict = validateRunnerPolicy(policy);
  return verdict.ok ? { violations: [], policy: verdict.policy } : { violations: verdict.violations };
}

/** `POST /v1/sandbox/managedRunners`. `query` may carry `requestId` and `runnerId`. */
export function parseCreateRunner(body: unknown, query: { requestId?: string; runnerId?: string }): CreateRunnerInput {
  const camel = normalizedObject(body ?? {});
  const parsed = CreateManagedRunnerBodySchema.safeParse(camel);
  if (!parsed.success) throw schemaRefusal('runner', parsed.error);
  const b = parsed.data;
  const violations: FieldViolation[] = [];

  const runnerId = b.identity?.runnerId ?? query.runnerId;
  if (runnerId === undefined || runnerId === '') {
    violations.push({ field: 'runner.identity.runner_id', rule: 'required', description: 'runner.identity.runner_id is required' });
  } else if (!RUNNER_ID_PATTERN.test(runnerId)) {
    violations.push({
      field: 'runner.identity.runner_id',
      rule: 'dns_label',
      description: 'runner.identity.runner_id must be 1-63 lowercase letters, digits or dashes, starting and ending with a letter or digit',
    });
  }
  violations.push(...zoneViolations(b.identity?.zone));
  const clusterId = b.identity?.clusterId || undefined;
  const clusterName = b.identity?.clusterName || undefined;
  if (!clusterId && !clusterName) {
    violations.push({ field: 'runner.identity.cluster_id', rule: 'required', description: 'runner.identity.cluster_id or cluster_name is required' });
  }
  if (b.spec) violations.push(...specViolations(b.spec, 'runner.spec'));

  let policy: Record<string, unknown> | null = null;
  if (b.policy) {
    const checked = policyViolations(b.policy);
    violations.push(...checked.violations);
    policy = checked.policy ?? null;
  }
  violations.push(...warmPoolViolations(b.spec?.warmPools ?? [], policy));
  const requestId = b.requestId ?? query.requestId;
  if (requestId !== undefined && (requestId === '' || Buffer.byteLength(requestId, 'utf8') > REQUEST_ID_MAX_BYTES)) {
    violations.push({ field: 'request_id', rule: 'max_128_bytes', description: `request_id must be 1-${REQUEST_ID_MAX_BYTES} UTF-8 bytes` });
  }
  if (violations.length > 0) throw invalid(violations);

  return {
    runnerId: runnerId as string,
    zone: b.identity?.zone as string,
    cluster: { ...(clusterId ? { clusterId } : {}), ...(clusterName ? { clusterName } : {}) },
    runnerGroupId: b.identity?.runnerGroupId || DEFAULT_RUNNER_GROUP_ID,
    displayName: b.displayName ?? '',
    spec: resolvedSpec(b.spec),
    policy,
    requestId,
  };
}

/**
 * `PATCH /v1/sandbox/managedRunners/{id}`: reads the members the mask covers. A covered member that
 * is absent or null is reset to its server default, except those that cannot be removed
 * (`identity.zone`, `spec.release_channel`; the policy is checked by the decider).
 */
export function parseUpdateRunner(body: unknown, plan: MaskPlan): UpdateRunnerInput {
  // The etag is output-only on reads but is how a policy write names its base revision.
  const camel = normalizedObject(body ?? {}, ['etag']);
  const parsed = UpdateManagedRunnerBodySchema.safeParse(camel);
  if (!parsed.success) throw schemaRefusal('runner', parsed.error);
  const b = parsed.data;
  const violations: FieldViolation[] = [];
  const settings: RunnerSettingsChange = {};

  if (planCovers(plan, 'display_name')) settings.displayName = b.displayName ?? '';
  if (planCovers(plan, 'identity.zone')) {
    const zoneProblems = zoneViolations(b.identity?.zone);
    violations.push(...zoneProblems);
    if (zoneProblems.length === 0) settings.zone = b.identity?.zone;
  }
  if (planCovers(plan, 'identity.runner_group_id')) settings.runnerGroupId = b.identity?.runnerGroupId || DEFAULT_RUNNER_GROUP_ID;

  if (b.spec) violations.push(...specViolations(b.spec, 'runner.spec'));
  if (planCovers(plan, 'spec') && plan.paths.includes('spec')) {
    settings.spec = resolvedSpec(b.spec);
  } else {
    const spec: Partial<StoredRunnerSpec> = {};
    const defaults = defaultRunnerSpec();
    if (planCovers(plan, 'spec.release_channel')) {
      const channel = b.spec?.releaseChannel;
      if (channel === undefined || channel === 'RELEASE_CHANNEL_UNSPECIFIED') {
        violations.push({
          field: 'runner.spec.release_channel',
          rule: 'required',
          description: 'runner.spec.release_channel cannot be removed; switch it to RELEASE_CHANNEL_STABLE or RELEASE_CHANNEL_RAPID',
        });
      } else {
        spec.releaseChannel = channel;
      }
    }
    if (planCovers(plan, 'spec.maintenance_policy')) spec.maintenancePolicy = b.spec?.maintenancePolicy ?? defaults.maintenancePolicy;
    if (planCovers(plan, 'spec.overrides')) spec.overrides = b.spec?.overrides ?? defaults.overrides;
    if (planCovers(plan, 'spec.enforce_resource_limits')) spec.enforceResourceLimits = b.spec?.enforceResourceLimits ?? defaults.enforceResourceLimits;
    if (planCovers(plan, 'spec.warm_pools')) spec.warmPools = b.spec?.warmPools ?? [];
    if (Object.keys(spec).length > 0) settings.spec = spec;
  }

  let policy: UpdateRunnerInput['policy'];
  if (planCovers(plan, 'policy')) {
    let document: Record<string, unknown> | null = null;
    if (b.policy) {
      const checked = policyViolations(b.policy);
      violations.push(...checked.violations);
      document = checked.policy ?? null;
    }
    policy = { document, etag: b.etag, explicit: plan.mode === 'paths' };
  }
  if (violations.length > 0) throw invalid(violations);
  return { settings, ...(policy ? { policy } : {}), bodyRunnerId: b.identity?.runnerId };
}

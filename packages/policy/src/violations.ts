import type { FieldViolation } from '@paddock/contracts';

/**
 * Every rule the engine can report, as a closed union so callers (gateway, control plane, CLI)
 * can map them to reasons and tests can assert on them.
 */
export const POLICY_RULES = [
  // Shape of a document or a request.
  'type',
  'required',
  'unknown_field',
  'invalid_enum',
  'invalid_value',
  'parse_error',
  'max_size',
  'max_depth',
  'max_items',
  'number_out_of_range',
  'alias_refused',
  'duplicate_key',
  'range',
  'duplicate',
  'alias_conflict',
  // Quantities, CIDRs, hostnames, ports.
  'invalid_quantity',
  'invalid_cidr',
  'non_canonical_cidr',
  'ipv4_mapped_cidr',
  'redundant_cidr',
  'invalid_hostname',
  'exactly_one_peer',
  'port_range',
  'end_port',
  'https_hostname_ports',
  // Policy document consistency.
  'base_field_refused',
  'default_egress_hostname',
  'default_runtime_class_not_allowed',
  'min_exceeds_max',
  'default_outside_bounds',
  // Sandbox request rules.
  'mutually_exclusive',
  'invalid_name',
  'reserved_name',
  'unknown_container',
  'unknown_volume',
  'invalid_base64',
  'not_absolute',
  'https_hostname_except_on_sandbox',
  'deny_egress_with_rules',
  'tenant_scope_unsupported',
  'runner_ids_requires_cks',
  // Constraints (each names its constraint path).
  'max_cpu',
  'min_cpu',
  'max_memory',
  'min_memory',
  'max_gpu_count',
  'cpu_ceiling',
  'memory_ceiling',
  'require_limits',
  'allowed_registries',
  'allowed_images',
  'egress_not_allowed',
  'ingress_not_allowed',
  'https_hostname_denied',
  'runtime_class_not_allowed',
  'privileged_not_allowed',
  'privilege_escalation_not_allowed',
  'capability_not_allowed',
  'seccomp_profile_not_allowed',
  'instance_type_not_allowed',
  'denied_annotation_prefix',
  'max_annotation_count',
  'volume_medium_not_allowed',
  'volume_max_size',
  'max_lifetime',
  // The caller's source address is outside the runner policy's controlPlaneAccess.sourceIpAllowlist.
  'source_ip_not_allowed',
  // The chosen runner cannot enforce or provide what the resolved spec needs.
  'runner_capability',
  // An engine bug caught at the boundary (the engine never throws); fuzzing asserts it never appears.
  'internal_error',
] as const;
export type PolicyRule = (typeof POLICY_RULES)[number];

/** Extra facts about one violation (requested value, limit, the constraint's path). */
export interface ViolationFacts {
  requested?: unknown;
  limit?: unknown;
  constraint?: string;
}

/** A list violations are appended to (plain data: the engine has no classes). */
export type Sink = FieldViolation[];

/** Appends one violation; `description` is prefixed with the field so it reads on its own. */
export function addViolation(
  sink: Sink,
  field: string,
  rule: PolicyRule,
  message: string,
  facts?: ViolationFacts,
): void {
  const v: FieldViolation = { field, rule, description: field ? `${field}: ${message}` : message };
  if (facts) {
    if (facts.requested !== undefined) v.requested = facts.requested;
    if (facts.limit !== undefined) v.limit = facts.limit;
    if (facts.constraint !== undefined) v.constraint = facts.constraint;
  }
  sink.push(v);
}

/** Path helpers: `join('a', 'b')` → `a.b`, `idx('a', 2)` → `a[2]`, map keys → `a["k.x"]`. */
/** Joins a path and a key written in the code (always a plain identifier path). */
export const join = (base: string, key: string): string => (base ? `${base}.${key}` : key);
const PLAIN_KEY = /^[A-Za-z_$][\w$]*$/;
/** Joins a path and a key that came from the input: odd keys (empty, dotted...) are bracketed. */
export const joinKey = (base: string, key: string): string =>
  PLAIN_KEY.test(key) ? join(base, key) : `${base}[${JSON.stringify(key)}]`;
export const idx = (base: string, i: number): string => `${base}[${i}]`;
export const mapKey = (base: string, key: string): string => `${base}[${JSON.stringify(key)}]`;

/** Deterministic order (field, then rule) so a decision never depends on input key order. */
export function sortViolations(list: FieldViolation[]): FieldViolation[] {
  return list.sort((a, b) =>
    a.field < b.field
      ? -1
      : a.field > b.field
        ? 1
        : a.rule < b.rule
          ? -1
          : a.rule > b.rule
            ? 1
            : a.description < b.description
              ? -1
              : a.description > b.description
                ? 1
                : 0,
  );
}

/** Short rendering of a value in a message: strings quoted, others JSON. */
export function show(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  try {
    const s = JSON.stringify(v);
    return s === undefined ? String(v) : s.length > 120 ? `${s.slice(0, 117)}...` : s;
  } catch {
    return String(v);
  }
}

export function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/**
 * Defence in depth for the engine's entry points: an engine bug must surface as a named
 * violation (`internal_error` on `field`), never as an exception. Entry points catch inline (a
 * wrapper taking the body as a function measured slower on the resolution hot path).
 */
export function internalError(
  field: string,
  what: string,
  e: unknown,
): { ok: false; violations: FieldViolation[] } {
  return {
    ok: false,
    violations: [
      {
        field,
        rule: 'internal_error',
        description: `${what}: ${e instanceof Error ? e.message : String(e)}`,
      },
    ],
  };
}

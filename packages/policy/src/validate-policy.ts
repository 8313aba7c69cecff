import type { EgressRule, FieldViolation, IngressRule, Policy } from '@paddock/contracts';
import {
  MAX_LIFETIME_SECONDS,
  MIN_IDLE_TIMEOUT_SECONDS,
  MAX_SOURCE_IP_CIDRS,
  POLICY_MAX_ENCODED_BYTES,
  POLICY_TOO_LARGE_MESSAGE,
  PolicySchema,
} from '@paddock/contracts';
import { parseCidr, type ParsedCidr } from './cidr';
import {
  checkCanonicalCidr,
  checkRules,
  describeRule,
  isObj,
  ruleContained,
  type NormRule,
} from './network';
import { PLATFORM_DEFAULTS } from './defaults';
import { parseCpuMillis, parseMemoryBytes } from './quantity';
import { addViolation, idx, join, internalError, show, sortViolations, type Sink } from './violations';

/**
 * Policy validation: structure through the contracts' zod schema, then every
 * semantic rule by hand, each violation naming its dotted camelCase path and its rule.
 */

export type ValidatePolicyResult =
  { ok: true; policy: Policy } | { ok: false; violations: FieldViolation[] };

/** `base` fields refused outright: security-sensitive, owned by the constraints instead. */
export const BASE_REFUSED_FIELDS = [
  'affinity',
  'securityContext',
  'runtimeClassName',
  'initContainers',
] as const;

/** UTF-8 byte length without allocating (TextEncoder would copy 256 KiB per check). */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

interface ZodIssueLike {
  code?: string;
  path: PropertyKey[];
  message: string;
  keys?: string[];
  expected?: string;
  values?: unknown[];
  input?: unknown;
}

export function pathOf(segments: readonly PropertyKey[], prefix = ''): string {
  let p = prefix;
  for (const s of segments) {
    if (typeof s === 'number') p = idx(p, s);
    else if (typeof s === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(s)) p = join(p, s);
    else p = `${p}[${JSON.stringify(String(s))}]`;
  }
  return p;
}

const camelOf = (k: string): string =>
  k.replace(/_+([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

function issueToViolations(issue: ZodIssueLike, sink: Sink, root: string): void {
  const field = pathOf(issue.path, root) || root;
  switch (issue.code ?? '') {
    case 'unrecognized_keys':
      for (const k of issue.keys ?? []) {
        const hint = k.includes('_')
          ? ` (did you mean ${show(camelOf(k))}? JSON fields are camelCase)`
          : '';
        addViolation(
          sink,
          pathOf([...issue.path, k], root),
          'unknown_field',
          `unknown field ${show(k)}${hint}`,
        );
      }
      return;
    case 'invalid_type':
      addViolation(
        sink,
        field,
        'type',
        `expected ${issue.expected ?? 'another type'}${issue.input === undefined ? ' (required)' : ''}`,
      );
      return;
    case 'invalid_value':
      addViolation(
        sink,
        field,
        'invalid_enum',
        `must be one of ${(issue.values ?? []).map(show).join(', ')}`,
      );
      return;
    case 'invalid_union':
      addViolation(
        sink,
        field,
        'type',
        'expected an integer, a quantity string or another accepted type for this field',
      );
      return;
    default:
      addViolation(sink, field, 'type', issue.message);
  }
}

/** Whether a document has a bad number or excessive depth (no paths built: the common case is clean). */
function hasBadNumbers(v: unknown, depth: number): boolean {
  if (depth > 64) return true;
  if (typeof v === 'number') {
    return !Number.isFinite(v) || (Number.isInteger(v) && !Number.isSafeInteger(v));
  }
  if (Array.isArray(v)) {
    for (const x of v) if (hasBadNumbers(x, depth + 1)) return true;
    return false;
  }
  if (isObj(v)) for (const k in v) if (hasBadNumbers(v[k], depth + 1)) return true;
  return false;
}

/** Every number in a document must be finite and, when integral, safely representable. */
function checkNumbers(v: unknown, path: string, sink: Sink, depth: number): void {
  if (depth > 64) {
    addViolation(sink, path, 'max_depth', 'document nesting exceeds 64 levels');
    return;
  }
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || (Number.isInteger(v) && !Number.isSafeInteger(v))) {
      addViolation(sink, path, 'number_out_of_range', `number ${String(v)} is out of range`);
    }
    return;
  }
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) checkNumbers(v[i], idx(path, i), sink, depth + 1);
    return;
  }
  if (isObj(v)) for (const k in v) checkNumbers(v[k], pathOf([k], path), sink, depth + 1);
}

function encodedSize(doc: unknown): number | null {
  try {
    const s = JSON.stringify(doc);
    return s === undefined ? 0 : utf8Length(s);
  } catch {
    return null;
  }
}

type QuantityKind = 'cpu' | 'memory';

/**
 * A default request (Paddock extension) must sit within the request bounds and not above the
 * default limit it is paired with: the policy's `default<Dim>`, else the platform's.
 */
function checkDefaultRequest(
  r: NonNullable<NonNullable<Policy['constraints']>['resources']>,
  dim: 'Cpu' | 'Memory',
  v: { request: number | undefined; limit: number | undefined; min: number | undefined; max: number | undefined },
  sink: Sink,
): void {
  if (v.request === undefined) return;
  const path = join('constraints.resources', `default${dim}Request`);
  const shown = show(r[`default${dim}Request`]);
  const limit = v.limit ?? (dim === 'Cpu' ? PLATFORM_DEFAULTS.cpuMillis : PLATFORM_DEFAULTS.memoryBytes);
  const limitName = v.limit !== undefined ? `default${dim} ${show(r[`default${dim}`])}` : `the platform default limit`;
  const out = (message: string, bound: unknown, constraint: string): void =>
    addViolation(sink, path, 'default_outside_bounds', `default${dim}Request ${shown} ${message}`, {
      requested: r[`default${dim}Request`],
      limit: bound,
      constraint: join('constraints.resources', constraint),
    });
  if (v.request > limit) out(`exceeds ${limitName}: a default request must not exceed its default limit`, r[`default${dim}`] ?? limit, `default${dim}`);
  if (v.max !== undefined && v.request > v.max) out(`exceeds max${dim} ${show(r[`max${dim}`])}`, r[`max${dim}`], `max${dim}`);
  if (v.min !== undefined && v.request < v.min) out(`is below min${dim} ${show(r[`min${dim}`])}`, r[`min${dim}`], `min${dim}`);
}

function checkQuantity(
  v: unknown,
  path: string,
  kind: QuantityKind,
  sink: Sink,
): number | undefined {
  if (v === undefined) return undefined;
  const n =
    typeof v === 'string' || typeof v === 'number'
      ? kind === 'cpu'
        ? parseCpuMillis(v)
        : parseMemoryBytes(v)
      : null;
  if (n === null) {
    addViolation(
      sink,
      path,
      'invalid_quantity',
      `invalid Kubernetes quantity ${show(v)} (examples: ${kind === 'cpu' ? '"500m", "1.5", "2"' : '"512Mi", "2Gi", "129M"'})`,
      { requested: v },
    );
    return undefined;
  }
  if (n < 0) {
    addViolation(sink, path, 'invalid_quantity', `quantity ${show(v)} must not be negative`, {
      requested: v,
    });
    return undefined;
  }
  return n;
}

/** The pod metadata a base may pin: only these; the rest (name, namespace, owners, finalizers) is the runner's. */
const BASE_METADATA_FIELDS = new Set(['annotations', 'labels']);

/**
 * A base pins pod annotations and labels, flat (`base.annotations`) or Kubernetes-style
 * (`base.metadata.annotations`). Anything else under `metadata`, and any value that is not a
 * string, is refused by name: compiling the base keeps only string annotations and labels, so
 * without this they would vanish without a word.
 */
function checkBaseMetadata(base: Record<string, unknown>, sink: Sink): void {
  const maps: [string, unknown][] = [
    ['base.annotations', base.annotations],
    ['base.labels', base.labels],
  ];
  const meta = base.metadata;
  if (isObj(meta)) {
    for (const k of Object.keys(meta)) {
      if (BASE_METADATA_FIELDS.has(k)) maps.push([`base.metadata.${k}`, meta[k]]);
      else addViolation(sink, `base.metadata.${k}`, 'base_field_refused', `base.metadata may set only annotations and labels, not ${show(k)} (the runner owns the pod's other metadata)`);
    }
  } else if (meta !== undefined) {
    addViolation(sink, 'base.metadata', 'type', 'expected an object with annotations and labels');
  }
  for (const [field, m] of maps) {
    if (m === undefined) continue;
    if (!isObj(m)) {
      addViolation(sink, field, 'type', 'expected a map of strings');
      continue;
    }
    for (const [k, v] of Object.entries(m)) {
      if (typeof v !== 'string') addViolation(sink, `${field}[${k}]`, 'type', 'expected a string');
    }
  }
}

/** Semantic checks on a structurally valid policy. Appends to `sink`, returns the alias-normalized policy. */
function checkSemantics(p: Policy, sink: Sink): Policy {
  const out: Policy = { ...p };
  if (p.base) {
    for (const f of BASE_REFUSED_FIELDS) {
      if (p.base[f] !== undefined) {
        addViolation(
          sink,
          join('base', f),
          'base_field_refused',
          `base must not set ${f} (security-sensitive; use constraints instead)`,
        );
      }
    }
    checkBaseMetadata(p.base, sink);
    const containers = p.base.containers;
    if (Array.isArray(containers)) {
      containers.forEach((c: unknown, i) => {
        if (isObj(c) && c.securityContext !== undefined) {
          addViolation(
            sink,
            `base.containers[${i}].securityContext`,
            'base_field_refused',
            'base must not set a container securityContext',
          );
        }
        if (isObj(c) && isObj(c.resources) && isObj(c.resources.requests)) {
          checkQuantity(
            c.resources.requests.cpu,
            `base.containers[${i}].resources.requests.cpu`,
            'cpu',
            sink,
          );
          checkQuantity(
            c.resources.requests.memory,
            `base.containers[${i}].resources.requests.memory`,
            'memory',
            sink,
          );
        }
      });
    } else if (containers !== undefined) {
      addViolation(sink, 'base.containers', 'type', 'expected a list of containers');
    }
  }
  const c = p.constraints;
  if (c) {
    out.constraints = { ...c };
    const r = c.resources;
    if (r) {
      const rp = 'constraints.resources';
      const maxCpu = checkQuantity(r.maxCpu, join(rp, 'maxCpu'), 'cpu', sink);
      const minCpu = checkQuantity(r.minCpu, join(rp, 'minCpu'), 'cpu', sink);
      const defCpu = checkQuantity(r.defaultCpu, join(rp, 'defaultCpu'), 'cpu', sink);
      const maxMem = checkQuantity(r.maxMemory, join(rp, 'maxMemory'), 'memory', sink);
      const minMem = checkQuantity(r.minMemory, join(rp, 'minMemory'), 'memory', sink);
      const defMem = checkQuantity(r.defaultMemory, join(rp, 'defaultMemory'), 'memory', sink);
      const defCpuReq = checkQuantity(r.defaultCpuRequest, join(rp, 'defaultCpuRequest'), 'cpu', sink);
      const defMemReq = checkQuantity(r.defaultMemoryRequest, join(rp, 'defaultMemoryRequest'), 'memory', sink);
      checkQuantity(r.cpuCeiling, join(rp, 'cpuCeiling'), 'cpu', sink);
      checkQuantity(r.memoryCeiling, join(rp, 'memoryCeiling'), 'memory', sink);
      if (
        r.maxGpuCount !== undefined &&
        (r.maxGpuCount < 0 || !Number.isSafeInteger(r.maxGpuCount))
      ) {
        addViolation(
          sink,
          join(rp, 'maxGpuCount'),
          'range',
          `maxGpuCount must be an integer >= 0, got ${show(r.maxGpuCount)}`,
          { requested: r.maxGpuCount, limit: '>= 0' },
        );
      }
      const bounds = (
        min: number | undefined,
        max: number | undefined,
        def: number | undefined,
        dim: 'Cpu' | 'Memory',
      ): void => {
        if (min !== undefined && max !== undefined && min > max) {
          addViolation(
            sink,
            join(rp, `min${dim}`),
            'min_exceeds_max',
            `min${dim} ${show(r[`min${dim}`])} exceeds max${dim} ${show(r[`max${dim}`])}`,
            { requested: r[`min${dim}`], limit: r[`max${dim}`] },
          );
        }
        if (def !== undefined && max !== undefined && def > max) {
          addViolation(
            sink,
            join(rp, `default${dim}`),
            'default_outside_bounds',
            `default${dim} ${show(r[`default${dim}`])} exceeds max${dim} ${show(r[`max${dim}`])}`,
            {
              requested: r[`default${dim}`],
              limit: r[`max${dim}`],
              constraint: join(rp, `max${dim}`),
            },
          );
        }
        if (def !== undefined && min !== undefined && def < min) {
          addViolation(
            sink,
            join(rp, `default${dim}`),
            'default_outside_bounds',
            `default${dim} ${show(r[`default${dim}`])} is below min${dim} ${show(r[`min${dim}`])}`,
            {
              requested: r[`default${dim}`],
              limit: r[`min${dim}`],
              constraint: join(rp, `min${dim}`),
            },
          );
        }
      };
      bounds(minCpu, maxCpu, defCpu, 'Cpu');
      bounds(minMem, maxMem, defMem, 'Memory');
      checkDefaultRequest(r, 'Cpu', { request: defCpuReq, limit: defCpu, min: minCpu, max: maxCpu }, sink);
      checkDefaultRequest(r, 'Memory', { request: defMemReq, limit: defMem, min: minMem, max: maxMem }, sink);
    }
    const img = c.image;
    if (img) {
      const lists = [
        ['allowedRegistries', img.allowedRegistries, 'registry prefix'],
        ['allowedImages', img.allowedImages, 'image reference'],
      ] as const;
      for (const [key, list, what] of lists) {
        list?.forEach((s, i) => {
          if (s.trim() === '' || /\s/.test(s)) {
            addViolation(
              sink,
              `constraints.image.${key}[${i}]`,
              'invalid_value',
              `invalid ${what} ${show(s)}`,
            );
          }
        });
      }
    }
    const n = c.network;
    if (n) {
      const np = 'constraints.network';
      const allowed = checkRules(n.allowedEgress, join(np, 'allowedEgress'), 'allowedEgress', sink);
      const defaults = checkRules(
        n.defaultEgress,
        join(np, 'defaultEgress'),
        'defaultEgress',
        sink,
      );
      const allowedIn = checkRules(
        n.allowedIngress,
        join(np, 'allowedIngress'),
        'allowedIngress',
        sink,
      );
      const defaultsIn = checkRules(
        n.defaultIngress,
        join(np, 'defaultIngress'),
        'defaultIngress',
        sink,
      );
      checkDefaultsInside(
        defaults,
        allowed,
        n.defaultEgress,
        join(np, 'defaultEgress'),
        join(np, 'allowedEgress'),
        sink,
      );
      checkDefaultsInside(
        defaultsIn,
        allowedIn,
        n.defaultIngress,
        join(np, 'defaultIngress'),
        join(np, 'allowedIngress'),
        sink,
      );
      if (n.denyDns !== undefined && n.denyHttpsHostnameRules !== undefined) {
        addViolation(
          sink,
          join(np, 'denyDns'),
          'alias_conflict',
          'cannot set both denyDns and denyHttpsHostnameRules',
        );
      }
      const net = { ...n };
      if (net.denyDns !== undefined) {
        net.denyHttpsHostnameRules ??= net.denyDns;
        delete net.denyDns;
      }
      if (net.allowedEgress) net.allowedEgress = renameAliases(net.allowedEgress);
      if (net.defaultEgress) net.defaultEgress = renameAliases(net.defaultEgress);
      out.constraints.network = net;
    }
    const s = c.security;
    if (s) {
      const allow = s.allowedRuntimeClasses ?? [];
      for (const key of ['defaultCpuRuntimeClass', 'defaultGpuRuntimeClass'] as const) {
        const d = s[key];
        if (d === undefined || d === '') continue;
        if (allow.length > 0 && !allow.includes(d)) {
          addViolation(
            sink,
            `constraints.security.${key}`,
            'default_runtime_class_not_allowed',
            `${show(d)} is not in allowedRuntimeClasses ${show(allow)}`,
            {
              requested: d,
              limit: allow,
              constraint: 'constraints.security.allowedRuntimeClasses',
            },
          );
        }
      }
      s.allowedCapabilities?.forEach((cap, i) => {
        if (!/^(CAP_)?[A-Za-z_]+$/.test(cap)) {
          addViolation(
            sink,
            `constraints.security.allowedCapabilities[${i}]`,
            'invalid_value',
            `invalid Linux capability name ${show(cap)}`,
          );
        }
      });
    }
    const l = c.lifecycle?.defaultLifetimeSeconds;
    if (l !== undefined && (l < 0 || l > MAX_LIFETIME_SECONDS || !Number.isSafeInteger(l))) {
      addViolation(
        sink,
        'constraints.lifecycle.defaultLifetimeSeconds',
        'range',
        `must be in 0..${MAX_LIFETIME_SECONDS} (30 days), got ${show(l)}`,
        { requested: l, limit: MAX_LIFETIME_SECONDS },
      );
    }
    const idle = c.lifecycle?.idleTimeoutSeconds;
    if (idle !== undefined && idle !== 0 && (idle < MIN_IDLE_TIMEOUT_SECONDS || idle > MAX_LIFETIME_SECONDS || !Number.isSafeInteger(idle))) {
      addViolation(
        sink,
        'constraints.lifecycle.idleTimeoutSeconds',
        'range',
        `must be 0 (never) or in ${MIN_IDLE_TIMEOUT_SECONDS}..${MAX_LIFETIME_SECONDS}, got ${show(idle)}`,
        { requested: idle, limit: MAX_LIFETIME_SECONDS },
      );
    }
    const m = c.metadata;
    if (m) {
      if (
        m.maxAnnotationCount !== undefined &&
        (m.maxAnnotationCount < 0 || !Number.isSafeInteger(m.maxAnnotationCount))
      ) {
        addViolation(
          sink,
          'constraints.metadata.maxAnnotationCount',
          'range',
          `must be an integer >= 0 (0 = no limit), got ${show(m.maxAnnotationCount)}`,
          { requested: m.maxAnnotationCount, limit: '>= 0' },
        );
      }
      m.deniedAnnotationPrefixes?.forEach((pre, i) => {
        if (pre === '') {
          addViolation(
            sink,
            `constraints.metadata.deniedAnnotationPrefixes[${i}]`,
            'invalid_value',
            'an empty prefix would deny every annotation; list real prefixes',
          );
        }
      });
    }
    if (c.volumes?.maxSize !== undefined) {
      checkQuantity(c.volumes.maxSize, 'constraints.volumes.maxSize', 'memory', sink);
    }
  }
  const cidrs = p.controlPlaneAccess?.sourceIpAllowlist?.cidrs;
  if (cidrs) checkSourceAllowlist(cidrs, 'controlPlaneAccess.sourceIpAllowlist.cidrs', sink);
  return out;
}

function renameAliases(rules: EgressRule[]): EgressRule[] {
  return rules.map((r) => {
    if (r.dnsName === undefined && r.dnsNameExcept === undefined) return r;
    const { dnsName, dnsNameExcept, ...rest } = r;
    const o: EgressRule = { ...rest };
    if (dnsName !== undefined) o.httpsHostname ??= dnsName;
    if (dnsNameExcept !== undefined) o.httpsHostnameExcept ??= dnsNameExcept;
    return o;
  });
}

/** A default outside a non-empty envelope would make every create that relies on it fail. */
function checkDefaultsInside(
  defaults: NormRule[],
  envelope: NormRule[],
  raw: (EgressRule | IngressRule)[] | undefined,
  defaultsPath: string,
  envelopePath: string,
  sink: Sink,
): void {
  if (envelope.length === 0 || !raw) return;
  for (const d of defaults) {
    if (!ruleContained(d, envelope)) {
      const i = raw.findIndex((r) => JSON.stringify(r) === JSON.stringify(d.rule) || r === d.rule);
      addViolation(
        sink,
        i >= 0 ? idx(defaultsPath, i) : defaultsPath,
        'default_outside_bounds',
        `default rule ${describeRule(d)} is not contained in ${envelopePath}`,
        { constraint: envelopePath },
      );
    }
  }
}

function checkSourceAllowlist(cidrs: string[], path: string, sink: Sink): void {
  if (cidrs.length > MAX_SOURCE_IP_CIDRS) {
    addViolation(
      sink,
      path,
      'max_items',
      `at most ${MAX_SOURCE_IP_CIDRS} prefixes, got ${cidrs.length}`,
      { requested: cidrs.length, limit: MAX_SOURCE_IP_CIDRS },
    );
  }
  const parsed: { text: string; c: ParsedCidr; at: number }[] = [];
  cidrs.forEach((text, i) => {
    const c = parseCidr(text);
    const ip = idx(path, i);
    if (!c) {
      addViolation(sink, ip, 'invalid_cidr', `Invalid CIDR ${show(text)}`, { requested: text });
    } else if (checkCanonicalCidr(c, text, ip, sink)) {
      parsed.push({ text, c, at: i });
    }
  });
  if (parsed.length > MAX_SOURCE_IP_CIDRS) return; // already refused; skip the quadratic check
  for (let i = 0; i < parsed.length; i++) {
    const a = parsed[i] as { text: string; c: ParsedCidr; at: number };
    for (let j = 0; j < parsed.length; j++) {
      if (i === j) continue;
      const b = parsed[j] as { text: string; c: ParsedCidr; at: number };
      if (a.c.version !== b.c.version) continue;
      // `a` is redundant when `b` covers it; of two equal prefixes the later one is reported.
      const covered = b.c.lo <= a.c.lo && a.c.hi <= b.c.hi && (a.c.prefix !== b.c.prefix || j < i);
      if (covered) {
        addViolation(
          sink,
          idx(path, a.at),
          'redundant_cidr',
          `source IP prefix ${a.text} is already covered by ${b.text}; remove the redundant prefix`,
          { requested: a.text, limit: b.text },
        );
        break;
      }
    }
  }
}

/**
 * With structural errors present, still report the semantic errors of the parts that are fine, so
 * a user fixes everything in one round. Semantic findings on (or around) a field that already has
 * a structural error are dropped, and a semantic check tripping over a malformed part is ignored.
 */
function addBestEffortSemantics(doc: Record<string, unknown>, sink: Sink): void {
  const semantic: Sink = [];
  try {
    checkSemantics(doc, semantic);
  } catch {
    return;
  }
  const related = (a: string, b: string): boolean =>
    a === b ||
    a.startsWith(`${b}.`) ||
    a.startsWith(`${b}[`) ||
    b.startsWith(`${a}.`) ||
    b.startsWith(`${a}[`);
  const structural = sink.map((v) => v.field);
  for (const v of semantic) if (!structural.some((f) => related(v.field, f))) sink.push(v);
}

/** Validates a camelCase policy document (already parsed from JSON/YAML). Never throws. */
export function validatePolicy(doc: unknown): ValidatePolicyResult {
  try {
    return validatePolicyUnsafe(doc);
  } catch (e) {
    return internalError('policy', 'policy could not be validated', e);
  }
}

function validatePolicyUnsafe(doc: unknown): ValidatePolicyResult {
  const sink: Sink = [];
  if (!isObj(doc)) {
    addViolation(
      sink,
      'policy',
      'type',
      `policy must be a JSON object, got ${doc === null ? 'null' : Array.isArray(doc) ? 'array' : typeof doc}`,
    );
    return { ok: false, violations: sink };
  }
  const size = encodedSize(doc);
  if (size === null) {
    addViolation(sink, 'policy', 'type', 'policy is not a JSON document (cycle or non-JSON value)');
    return { ok: false, violations: sink };
  }
  if (size > POLICY_MAX_ENCODED_BYTES) {
    sink.push({
      field: 'policy',
      rule: 'max_size',
      description: POLICY_TOO_LARGE_MESSAGE,
      requested: size,
      limit: POLICY_MAX_ENCODED_BYTES,
    });
    return { ok: false, violations: sink };
  }
  // Two passes: a cheap scan, and the path-building walk only when something is wrong.
  if (hasBadNumbers(doc, 0)) checkNumbers(doc, '', sink, 0);
  if (sink.length) return { ok: false, violations: sortViolations(sink) };
  const parsed = PolicySchema.safeParse(doc);
  if (!parsed.success) {
    for (const issue of parsed.error.issues as unknown as ZodIssueLike[]) {
      issueToViolations(issue, sink, '');
    }
    addBestEffortSemantics(doc, sink);
    return { ok: false, violations: sortViolations(sink) };
  }
  const policy = checkSemantics(parsed.data, sink);
  if (sink.length) return { ok: false, violations: sortViolations(sink) };
  return { ok: true, policy };
}

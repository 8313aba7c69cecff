import fc from 'fast-check';
import { ContainerSchema, SandboxSpecSchema } from '@paddock/contracts';
import { resolveSandboxSpec, validatePolicy } from '../src/index';
import { fieldsUnknownToSchema, SPEC_LEVELS, unreadFields } from '../src/spec/fields';
import * as levels from '../src/spec/fields';
import { allPaths, clean, replaceAt } from './support/arbitraries';
import { validSpecArb } from './support/schema-arbitraries';

/**
 * The policy engine reads sandbox specs by hand (hot path) and the other planes parse them with
 * the contract's zod schema. These tests prove the two agree: on which fields exist, on every
 * field being read, and on which specs are admitted.
 */

const RUNS = Number(process.env.PADDOCK_PROPERTY_RUNS ?? 1500);
const SEED = 20261202;

// Everything the valid generator asks for is allowed, so a refusal can only be about shape.
const permissive = validatePolicy({
  constraints: {
    security: {
      allowPrivileged: true,
      allowedCapabilities: ['NET_BIND_SERVICE', 'SYS_PTRACE'],
      allowedSeccompProfiles: ['RuntimeDefault', 'Unconfined'],
      allowedRuntimeClasses: ['kata-qemu', 'gvisor'],
    },
  },
});
if (!permissive.ok) throw new Error('the permissive test policy must be valid');
const policy = permissive.policy;

const admits = (spec: unknown): boolean => resolveSandboxSpec({ policy, spec }).ok;
const parses = (spec: unknown): boolean => SandboxSpecSchema.safeParse(spec).success;

/** A rule names exactly one peer, so a peer under test stands alone. */
const PEERS = new Set(['cidr', 'httpsHostname', 'dnsName', 'tenant', 'any', 'selector']);

/** A spec placing `value` at field `key` of each level, inside an otherwise valid spec. */
const HOSTS: Record<
  string,
  { at: (key: string) => string; spec: (key: string, value: unknown) => unknown }
> = {
  [levels.SPEC.at]: { at: (k) => k, spec: (k, v) => ({ [k]: v }) },
  [levels.CONTAINER.at]: {
    at: (k) => `containers[0].${k}`,
    spec: (k, v) => ({ containers: [{ [k]: v }] }),
  },
  [levels.RESOURCES.at]: {
    at: (k) => `containers[0].resources.${k}`,
    spec: (k, v) => ({ containers: [{ resources: { [k]: v } }] }),
  },
  [levels.REQUIREMENTS.at]: {
    at: (k) => `containers[0].resourceRequirements.${k}`,
    spec: (k, v) => ({ containers: [{ resourceRequirements: { [k]: v } }] }),
  },
  [levels.GPU.at]: {
    at: (k) => `containers[0].resources.gpu.${k}`,
    spec: (k, v) => ({ containers: [{ resources: { gpu: { count: 1, [k]: v } } }] }),
  },
  [levels.SECURITY.at]: {
    at: (k) => `containers[0].securityContext.${k}`,
    spec: (k, v) => ({ containers: [{ securityContext: { [k]: v } }] }),
  },
  [levels.FILE.at]: {
    at: (k) => `containers[0].files[0].${k}`,
    spec: (k, v) => ({ containers: [{ files: [{ path: '/etc/a', content: '', [k]: v }] }] }),
  },
  [levels.MOUNT.at]: {
    at: (k) => `containers[0].volumeMounts[0].${k}`,
    spec: (k, v) => ({
      volumes: [{ name: 'v' }],
      containers: [{ volumeMounts: [{ volume: 'v', mountPath: '/m', [k]: v }] }],
    }),
  },
  [levels.VOLUME.at]: {
    at: (k) => `volumes[0].${k}`,
    spec: (k, v) => ({ volumes: [{ name: 'v', [k]: v }] }),
  },
  [levels.SCRATCH.at]: {
    at: (k) => `volumes[0].scratch.${k}`,
    spec: (k, v) => ({ volumes: [{ name: 'v', scratch: { [k]: v } }] }),
  },
  [levels.NETWORK.at]: { at: (k) => `network.${k}`, spec: (k, v) => ({ network: { [k]: v } }) },
  [levels.EGRESS_RULE.at]: {
    at: (k) => `network.egress[0].${k}`,
    spec: (k, v) => ({ network: { egress: [PEERS.has(k) ? { [k]: v } : { any: true, [k]: v }] } }),
  },
  [levels.INGRESS_RULE.at]: {
    at: (k) => `network.ingress[0].${k}`,
    spec: (k, v) => ({ network: { ingress: [PEERS.has(k) ? { [k]: v } : { any: true, [k]: v }] } }),
  },
  [levels.CIDR_BLOCK.at]: {
    at: (k) => `network.egress[0].cidr.${k}`,
    spec: (k, v) => ({ network: { egress: [{ cidr: { cidr: '10.0.0.0/8', [k]: v } }] } }),
  },
  [levels.SELECTOR.at]: {
    at: (k) => `network.egress[0].selector.${k}`,
    spec: (k, v) => ({ network: { egress: [{ selector: { podLabels: { a: 'b' }, [k]: v } }] } }),
  },
  [levels.PORT.at]: {
    at: (k) => `network.egress[0].ports[0].${k}`,
    spec: (k, v) => ({
      network: { egress: [{ cidr: { cidr: '10.0.0.0/8' }, ports: [{ port: 443, [k]: v }] }] },
    }),
  },
};

/** Values of every JSON type but strings: each field's schema refuses at least one of them. */
const WRONG_VALUES: unknown[] = [{ wrong: 1 }, [{ wrong: 1 }], 12.5, true, null, 'not-a-value'];

describe('the spec reader and SandboxSpecSchema agree', () => {
  it('every field the schema declares is read by the reader, at every level', () => {
    for (const level of SPEC_LEVELS) {
      expect({ level: level.at, unread: unreadFields(level) }).toEqual({
        level: level.at,
        unread: [],
      });
      expect({ level: level.at, unknown: fieldsUnknownToSchema(level) }).toEqual({
        level: level.at,
        unknown: [],
      });
      // The key set the reader admits is the schema's, not a copy of it.
      expect([...level.keys].sort()).toEqual(Object.keys(level.schema.shape).sort());
    }
  });

  it('a field added to the schema and unknown to the reader is named by the check above', () => {
    const grown = ContainerSchema.extend({ hostname: ContainerSchema.shape.image });
    expect(unreadFields({ schema: grown, reads: levels.CONTAINER.reads })).toEqual(['hostname']);
    const shrunk = ContainerSchema.omit({ workingDir: true });
    expect(fieldsUnknownToSchema({ schema: shrunk, reads: levels.CONTAINER.reads })).toEqual([
      'workingDir',
    ]);
  });

  it('every field is honoured or refused by name: a wrong value at each field is refused at its path', () => {
    for (const level of SPEC_LEVELS) {
      const host = HOSTS[level.at];
      if (!host) throw new Error(`no test host for spec level ${level.at}: add one to HOSTS`);
      for (const key of level.keys) {
        const wrong = WRONG_VALUES.filter((v) => !parses(host.spec(key, v)));
        expect({ field: host.at(key), wrongValues: wrong.length > 0 }).toEqual({
          field: host.at(key),
          wrongValues: true,
        });
        for (const value of wrong) {
          const r = resolveSandboxSpec({ policy, spec: host.spec(key, value) });
          const fields = r.ok ? [] : r.violations.map((v) => v.field);
          // A field the reader did not look at would be admitted (or refused elsewhere).
          expect({
            field: host.at(key),
            value,
            named: fields.some((f) => f.startsWith(host.at(key))),
          }).toEqual({ field: host.at(key), value, named: true });
        }
      }
    }
  });

  it('valid specs: the reader admits every spec the generator makes, and so does the schema', () => {
    fc.assert(
      fc.property(validSpecArb, (spec) => {
        const r = resolveSandboxSpec({ policy, spec });
        expect(r.ok ? [] : r.violations).toEqual([]);
        expect(parses(spec)).toBe(true);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('near misses (unknown keys, wrong types, out-of-range values, missing fields): admitted exactly when the schema parses', () => {
    let refused = 0;
    fc.assert(
      fc.property(nearMissArb, ({ spec, kind, at }) => {
        const schemaOk = parses(spec);
        expect({ kind, at, readerAdmits: admits(spec) }).toEqual({
          kind,
          at,
          readerAdmits: schemaOk,
        });
        if (kind !== 'wrong-type') {
          expect({ kind, at, schemaOk }).toEqual({ kind, at, schemaOk: false });
        }
        if (!schemaOk) refused++;
      }),
      { seed: SEED + 1, numRuns: RUNS * 2 },
    );
    expect(refused).toBeGreaterThan(RUNS);
  });

  it('values of the right type outside the engine ranges: the schema (structural) parses them, the reader refuses them by name', () => {
    const cases: [unknown, string][] = [
      [{ maxLifetimeSeconds: -1 }, 'maxLifetimeSeconds'],
      [{ maxLifetimeSeconds: 2_592_001 }, 'maxLifetimeSeconds'],
      [{ maxLifetimeSeconds: '12345678901234567890' }, 'maxLifetimeSeconds'],
      [
        { containers: [{ securityContext: { runAsUser: 4294967296 } }] },
        'containers[0].securityContext.runAsUser',
      ],
      [
        { containers: [{ resources: { gpu: { count: -1 } } }] },
        'containers[0].resources.gpu.count',
      ],
      [{ containers: [{ resources: { cpu: 'lots' } }] }, 'containers[0].resources.cpu'],
      [
        { volumes: [{ name: 'v', scratch: { size: '200%', medium: 'STORAGE_MEDIUM_MEMORY' } }] },
        'volumes[0].scratch.size',
      ],
      [{ network: { egress: [{ cidr: { cidr: '10.0.0.0/33' } }] } }, 'network.egress[0].cidr.cidr'],
      [
        { network: { egress: [{ any: true, ports: [{ port: 70000 }] }] } },
        'network.egress[0].ports[0]',
      ],
    ];
    for (const [spec, field] of cases) {
      expect({ field, parses: parses(spec) }).toEqual({ field, parses: true });
      const r = resolveSandboxSpec({ policy, spec });
      expect({
        field,
        named: !r.ok && r.violations.some((v) => v.field.startsWith(field)),
      }).toEqual({
        field,
        named: true,
      });
    }
  });
});

// ---- near-miss generator ------------------------------------------------------------------------

type Path = (string | number)[];
type Kind = 'unknown-key' | 'wrong-type' | 'out-of-range' | 'missing-field';

/** Free-form maps and passthrough records: any key and (for records) any value is valid there. */
const FREE_FORM = new Set([
  'annotations',
  'environmentVariables',
  'podLabels',
  'namespaceLabels',
  'objectStorageAccess',
  'imagePullCredentials',
  'startupProbe',
]);
const FREE_LISTS = new Set(['services', 'secretStores']);
const ANY_VALUE = new Set([
  'objectStorageAccess',
  'imagePullCredentials',
  'startupProbe',
  'services',
  'secretStores',
]);
/** Quantities take strings and numbers, so a number there is not a type error. */
const QUANTITIES = new Set(['cpu', 'memory', 'size']);
const INT64 = new Set([
  'maxLifetimeSeconds',
  'runAsUser',
  'runAsGroup',
  'count',
  'memoryGb',
  'port',
  'endPort',
]);
const ENUMS = new Set(['mode', 'medium', 'dnsEgress', 'tenant', 'protocol']);
const REQUIRED: Record<string, string[]> = {
  volumes: ['name'],
  files: ['path', 'content'],
  volumeMounts: ['volume', 'mountPath'],
  ports: ['port'],
};

const inFreeForm = (p: Path): boolean =>
  p.some((k, i) => FREE_FORM.has(String(k)) || (FREE_LISTS.has(String(k)) && i < p.length - 1));
const inAnyValue = (p: Path): boolean => p.slice(0, -1).some((k) => ANY_VALUE.has(String(k)));

function valueAt(doc: unknown, p: Path): unknown {
  let cur: unknown = doc;
  for (const k of p) cur = (cur as Record<string | number, unknown>)[k];
  return cur;
}

function jsonType(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

const OUT_OF_RANGE_INT = [1.5, '1e3', '123456789012345678901', 2 ** 60, '0x10'];

const nearMissArb = fc
  .tuple(
    validSpecArb,
    fc.constantFrom<Kind>('unknown-key', 'wrong-type', 'out-of-range', 'missing-field'),
    fc.nat(),
    fc.nat(),
  )
  .map(([valid, kind, n, m]) => {
    const doc = clean(valid);
    const paths = allPaths(doc).filter((p) => p.length > 0 && !inFreeForm(p.slice(0, -1)));
    const last = (p: Path): string => String(p[p.length - 1]);
    const pick = <T>(xs: T[]): T | undefined => xs[n % Math.max(1, xs.length)];
    if (kind === 'unknown-key') {
      const objects = [[] as Path, ...paths].filter(
        (p) => jsonType(valueAt(doc, p)) === 'object' && !inFreeForm(p) && !inAnyValue([...p, 'x']),
      );
      const p = pick(objects) ?? [];
      const key = ['unknownField', 'max_lifetime_seconds', 'Image', 'dnsName2'][m % 4] as string;
      const target = valueAt(doc, p) as Record<string, unknown>;
      return { kind, at: [...p, key].join('.'), spec: replaceAt(doc, p, { ...target, [key]: 1 }) };
    }
    if (kind === 'wrong-type') {
      const p = pick(paths.filter((q) => !inAnyValue(q))) ?? ['containers'];
      const original = valueAt(doc, p);
      const wrong = WRONG_VALUES.filter(
        (v) =>
          jsonType(v) !== jsonType(original) && !(QUANTITIES.has(last(p)) && typeof v === 'number'),
      );
      const value = wrong[m % wrong.length];
      return { kind, at: p.join('.'), spec: replaceAt(doc, p, value) };
    }
    if (kind === 'out-of-range') {
      const ints = paths.filter((p) => INT64.has(last(p)) || ENUMS.has(last(p)));
      const p = pick(ints) ?? ['maxLifetimeSeconds'];
      const value = ENUMS.has(last(p))
        ? 'NOT_ONE_OF_THE_ENUM'
        : OUT_OF_RANGE_INT[m % OUT_OF_RANGE_INT.length];
      return { kind, at: p.join('.'), spec: replaceAt(doc, p, value) };
    }
    const required = paths.filter((p) => {
      const parent = p[p.length - 2];
      return (
        typeof parent === 'number' && (REQUIRED[String(p[p.length - 3])] ?? []).includes(last(p))
      );
    });
    const p = pick(required);
    if (!p) {
      return { kind: 'unknown-key' as Kind, at: 'unknownField', spec: { ...doc, unknownField: 1 } };
    }
    const parent = valueAt(doc, p.slice(0, -1)) as Record<string, unknown>;
    const { [last(p)]: _dropped, ...rest } = parent;
    return { kind, at: p.join('.'), spec: replaceAt(doc, p.slice(0, -1), rest) };
  });

import fc from 'fast-check';
import { formatCpu, formatMemory } from '../../src/index';

/** Generators of realistic policies and specs for property tests (valid shapes, varied values). */

const opt = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> =>
  fc.option(a, { nil: undefined, freq: 2 });

export const cpuQ = fc.oneof(
  fc.integer({ min: 1, max: 16_000 }).map(formatCpu),
  fc.integer({ min: 1, max: 16 }).map(String),
  fc.constantFrom('500m', '1.5', '250m', '2', '0.5'),
);
export const memQ = fc.oneof(
  fc.integer({ min: 1, max: 64 }).map((g) => `${g}Gi`),
  fc.integer({ min: 64, max: 4096 }).map((m) => `${m}Mi`),
  fc.integer({ min: 1, max: 2 ** 36 }).map(formatMemory),
);

export const REGISTRIES = ['ghcr.io/acme', 'docker.io/library', 'registry.example.com/team'];
export const IMAGES = [
  'ghcr.io/acme/app:1',
  'ghcr.io/acme-evil/app:1',
  'python:3.12',
  'registry.example.com/team/tool@sha256:abc',
  'node:20',
];
export const RUNTIME_CLASSES = ['kata-qemu', 'kata-qemu-nvidia-gpu', 'gvisor'];
export const CAPABILITIES = ['NET_BIND_SERVICE', 'SYS_PTRACE', 'NET_ADMIN'];
export const INSTANCE_TYPES = ['h100', 'a100', 'cpu-large'];
export const ENVELOPE_RULES = [
  { cidr: { cidr: '0.0.0.0/0', except: ['169.254.169.254/32'] } },
  { cidr: { cidr: '10.0.0.0/8' }, ports: [{ protocol: 'TCP', port: 443 }] },
  { httpsHostname: '*.example.com' },
  { tenant: 'TENANT_SCOPE_SAME_ORG' },
  { any: true },
  { selector: { podLabels: { app: 'db' } } },
];
export const DECLARED_RULES = [
  { cidr: { cidr: '203.0.113.0/24' } },
  { cidr: { cidr: '169.254.0.0/16' } },
  { cidr: { cidr: '10.1.0.0/16' }, ports: [{ protocol: 'TCP', port: 443 }] },
  { cidr: { cidr: '10.1.0.0/16' } },
  { httpsHostname: 'api.example.com' },
  { httpsHostname: 'pypi.org' },
  { tenant: 'TENANT_SCOPE_SAME_ORG' },
  { tenant: 'TENANT_SCOPE_SAME_USER' },
  { any: true },
  { selector: { podLabels: { app: 'db', tier: 'x' } } },
];

const subset = <T>(xs: readonly T[]): fc.Arbitrary<T[]> => fc.subarray([...xs]);

export const policyArb = fc.record(
  {
    displayName: opt(fc.string({ maxLength: 20 })),
    base: opt(fc.constant({ schedulerName: 's', metadata: { annotations: { pinned: 'yes' } } })),
    constraints: opt(
      fc.record(
        {
          resources: opt(
            fc.record(
              {
                maxCpu: opt(cpuQ),
                minCpu: opt(fc.constantFrom('100m', '250m')),
                defaultCpu: opt(fc.constantFrom('500m', '1', '2')),
                maxMemory: opt(memQ),
                minMemory: opt(fc.constantFrom('64Mi', '128Mi')),
                defaultMemory: opt(fc.constantFrom('512Mi', '1Gi', '2Gi')),
                maxGpuCount: opt(
                  fc.oneof(fc.integer({ min: 0, max: 4 }), fc.constantFrom('0', '2')),
                ),
                cpuCeiling: opt(cpuQ),
                memoryCeiling: opt(memQ),
                requireLimits: opt(fc.boolean()),
              },
              { requiredKeys: [] },
            ),
          ),
          image: opt(
            fc.record(
              { allowedRegistries: opt(subset(REGISTRIES)), allowedImages: opt(subset(IMAGES)) },
              { requiredKeys: [] },
            ),
          ),
          network: opt(
            fc.record(
              {
                allowedEgress: opt(subset(ENVELOPE_RULES)),
                defaultEgress: opt(
                  fc.constantFrom(
                    [{ cidr: { cidr: '10.0.0.0/16' }, ports: [{ port: 443 }] }],
                    [{ tenant: 'TENANT_SCOPE_SAME_ORG' }],
                  ),
                ),
                denyHttpsHostnameRules: opt(fc.boolean()),
                allowedIngress: opt(
                  fc.constantFrom([{ cidr: { cidr: '10.0.0.0/8' } }], [{ any: true }]),
                ),
              },
              { requiredKeys: [] },
            ),
          ),
          security: opt(
            fc.record(
              {
                allowPrivileged: opt(fc.boolean()),
                allowedCapabilities: opt(subset(CAPABILITIES)),
                allowedSeccompProfiles: opt(
                  fc.constantFrom(['RuntimeDefault'], ['RuntimeDefault', 'Unconfined']),
                ),
                allowedRuntimeClasses: opt(subset(RUNTIME_CLASSES)),
              },
              { requiredKeys: [] },
            ),
          ),
          instance: opt(
            fc.record({ allowedInstanceTypes: opt(subset(INSTANCE_TYPES)) }, { requiredKeys: [] }),
          ),
          lifecycle: opt(
            fc.record(
              { defaultLifetimeSeconds: opt(fc.integer({ min: 0, max: 100_000 })) },
              { requiredKeys: [] },
            ),
          ),
          metadata: opt(
            fc.record(
              {
                deniedAnnotationPrefixes: opt(subset(['kubernetes.io/', 'secret.'])),
                maxAnnotationCount: opt(fc.integer({ min: 0, max: 3 })),
              },
              { requiredKeys: [] },
            ),
          ),
          volumes: opt(
            fc.record(
              {
                allowedMedia: opt(subset(['STORAGE_MEDIUM_DISK', 'STORAGE_MEDIUM_MEMORY'])),
                maxSize: opt(fc.constantFrom('5Gi', '20Gi', '100Gi')),
              },
              { requiredKeys: [] },
            ),
          ),
        },
        { requiredKeys: [] },
      ),
    ),
  },
  { requiredKeys: [] },
);

const resourcesArb = fc.record(
  {
    cpu: opt(cpuQ),
    memory: opt(memQ),
    gpu: opt(
      fc.record(
        { count: fc.integer({ min: 0, max: 4 }), type: opt(fc.constantFrom('H100', 'A100')) },
        { requiredKeys: ['count'] },
      ),
    ),
  },
  { requiredKeys: [] },
);

const containerArb = fc.record(
  {
    image: opt(fc.constantFrom(...IMAGES)),
    command: opt(fc.constantFrom('python', 'bash')),
    args: opt(fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 })),
    environmentVariables: opt(
      fc.dictionary(fc.constantFrom('A', 'B_C', 'lower_key'), fc.string({ maxLength: 5 })),
    ),
    resources: opt(resourcesArb),
    resourceRequirements: opt(
      fc.record({ requests: opt(resourcesArb), limits: opt(resourcesArb) }, { requiredKeys: [] }),
    ),
    securityContext: opt(
      fc.record(
        {
          privileged: opt(fc.boolean()),
          runAsUser: opt(fc.integer({ min: 0, max: 65535 })),
          capabilitiesAdd: opt(subset(CAPABILITIES)),
          seccompProfile: opt(fc.constantFrom('RuntimeDefault', 'Unconfined')),
        },
        { requiredKeys: [] },
      ),
    ),
  },
  { requiredKeys: [] },
);

export const specArb = fc
  .record(
    {
      containers: opt(fc.array(containerArb, { minLength: 1, maxLength: 3 })),
      maxLifetimeSeconds: opt(
        fc.oneof(
          fc.integer({ min: 0, max: 2_700_000 }),
          fc.integer({ min: 0, max: 100_000 }).map(String),
        ),
      ),
      annotations: opt(
        fc.dictionary(
          fc.constantFrom('team', 'kubernetes.io/x', 'secret.y', 'pinned', 'a'),
          fc.constantFrom('v', 'w'),
        ),
      ),
      tags: opt(fc.array(fc.constantFrom('a', 'b'), { maxLength: 2 })),
      network: opt(
        fc.oneof(
          fc.record({ egress: fc.subarray(DECLARED_RULES, { minLength: 1 }) }),
          fc.constant({ denyEgress: true }),
          fc.record({
            ingress: fc.constantFrom(
              [{ cidr: { cidr: '10.1.0.0/16' } }],
              [{ cidr: { cidr: '192.168.0.0/16' } }],
            ),
          }),
        ),
      ),
      runtimeClass: opt(fc.constantFrom(...RUNTIME_CLASSES)),
      instanceType: opt(fc.constantFrom(...INSTANCE_TYPES)),
      volumes: opt(
        fc.constantFrom(
          [{ name: 'data', scratch: { size: '10Gi' } }],
          [{ name: 'shm', scratch: { medium: 'STORAGE_MEDIUM_MEMORY', size: '1Gi' } }],
          [{ name: 'data' }],
        ),
      ),
    },
    { requiredKeys: [] },
  )
  .map((s) => {
    // Name containers so multi-container specs are well-formed, and pick a primary.
    if (s.containers) {
      const named = s.containers.map((c, i) => ({ ...c, name: `c${i}` }));
      return s.containers.length > 1
        ? { ...s, containers: named, primaryContainer: 'c0' }
        : { ...s, containers: named };
    }
    return s;
  });

/** Removes undefined-valued keys (fast-check's optional fields) so documents are plain JSON. */
export function clean<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/** Every path (as key arrays) of a JSON value, in a deterministic order. */
export function allPaths(
  v: unknown,
  prefix: (string | number)[] = [],
  out: (string | number)[][] = [],
): (string | number)[][] {
  out.push(prefix);
  if (Array.isArray(v)) v.forEach((x, i) => allPaths(x, [...prefix, i], out));
  else if (v !== null && typeof v === 'object') {
    for (const k of Object.keys(v)) {
      allPaths((v as Record<string, unknown>)[k], [...prefix, k], out);
    }
  }
  return out;
}

/** Returns a copy of `doc` with the value at `path` replaced (the root when path is empty). */
export function replaceAt(doc: unknown, path: (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const copy = clean(doc) as Record<string | number, unknown>;
  let cur: Record<string | number, unknown> = copy;
  for (let i = 0; i < path.length - 1; i++) {
    cur = cur[path[i] as string | number] as Record<string | number, unknown>;
  }
  cur[path[path.length - 1] as string | number] = value;
  return copy;
}

/** Mutates a valid document at a few random places with arbitrary JSON (fuzzing). */
export const mutated = (base: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> =>
  fc
    .tuple(
      base,
      fc.array(
        fc.tuple(
          fc.nat(),
          fc.oneof(
            fc.jsonValue({ maxDepth: 3 }),
            fc.constantFrom(-1, 0, 1e300, '', '-1Gi', '10.0.0.1/8', '*', null),
          ),
        ),
        { minLength: 1, maxLength: 4 },
      ),
    )
    .map(([doc, edits]) => {
      let d = clean(doc);
      for (const [n, value] of edits) {
        const paths = allPaths(d);
        d = replaceAt(d, paths[n % paths.length] ?? [], value);
      }
      return d;
    });

/** Deterministically reorders every object's keys (reverse, then rotate by depth). */
export function reorderKeys(v: unknown, depth = 0): unknown {
  if (Array.isArray(v)) return v.map((x) => reorderKeys(x, depth + 1));
  if (v === null || typeof v !== 'object') return v;
  const keys = Object.keys(v).reverse();
  const rot = keys.length ? depth % keys.length : 0;
  const order = [...keys.slice(rot), ...keys.slice(0, rot)];
  const out: Record<string, unknown> = {};
  for (const k of order) out[k] = reorderKeys((v as Record<string, unknown>)[k], depth + 1);
  return out;
}

import fc from 'fast-check';

/**
 * Valid sandbox specs touching every field of every level of the schema, with values valid for
 * the policy engine too (DNS-1123 names, absolute paths, base64, canonical CIDRs...), so that a
 * test can tell shape errors from rule violations.
 */

const opt = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> =>
  fc.option(a, { nil: undefined, freq: 2 });
const some = <T extends Record<string, fc.Arbitrary<unknown>>>(r: T) =>
  fc.record(r, { requiredKeys: [] });

const int64 = (min: number, max: number): fc.Arbitrary<number | string> =>
  fc.oneof(fc.integer({ min, max }), fc.integer({ min, max }).map(String));
const cpu = fc.constantFrom<string | number>('500m', '1', 2, '250m', 0.5);
const memory = fc.constantFrom<string | number>('512Mi', '1Gi', 1073741824, '2G');
const label = fc.constantFrom('a', 'b-c', 'x1');
const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,8}[a-z0-9]$/);

const gpuArb = fc.oneof(
  some({ count: int64(0, 4), type: fc.constantFrom('H100', 'A100') }),
  some({ count: int64(0, 4), memoryGb: int64(0, 80) }),
);
const resourcesArb = some({ cpu, memory, gpu: gpuArb });
const requirementsArb = fc.oneof(
  fc.record({ requests: some({ cpu: fc.constant('250m'), memory: fc.constant('256Mi') }) }),
  fc.record({
    requests: some({ cpu: fc.constant('250m'), memory: fc.constant('256Mi'), gpu: gpuArb }),
    limits: some({ cpu: fc.constant('1'), memory: fc.constant('1Gi') }),
  }),
  fc.record({ limits: some({ cpu, memory, gpu: gpuArb }) }),
);
const securityArb = some({
  runAsUser: int64(0, 65535),
  runAsGroup: int64(0, 65535),
  privileged: fc.boolean(),
  allowPrivilegeEscalation: fc.boolean(),
  readOnlyRootFilesystem: fc.boolean(),
  capabilitiesAdd: fc.subarray(['NET_BIND_SERVICE', 'SYS_PTRACE']),
  capabilitiesDrop: fc.subarray(['ALL', 'NET_RAW']),
  seccompProfile: fc.constantFrom('RuntimeDefault', 'Unconfined'),
});
const fileArb = fc.record({
  path: fc.constantFrom('/etc/app.conf', '/work/a.txt'),
  content: fc.constantFrom('', 'aGVsbG8=', 'YWJj'),
});
const record = fc.dictionary(label, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });

const containerArb = (volumes: string[]) =>
  some({
    image: fc.constantFrom('python:3.12', 'ghcr.io/acme/app:1', ''),
    command: fc.oneof(
      fc.constantFrom('python', ''),
      fc.array(fc.constantFrom('sh', '-c'), { maxLength: 2 }),
    ),
    args: fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }),
    environmentVariables: fc.dictionary(fc.constantFrom('A', 'B_C'), fc.string({ maxLength: 4 })),
    resources: resourcesArb,
    workingDir: fc.constantFrom('/work', ''),
    securityContext: securityArb,
    files: fc.array(fileArb, { maxLength: 2 }),
    volumeMounts: volumes.length
      ? fc.array(
          fc.record(
            {
              volume: fc.constantFrom(...volumes),
              mountPath: fc.constantFrom('/data', '/mnt/x'),
              readOnly: fc.boolean(),
              subPath: fc.constantFrom('', 'sub', 'a/b'),
            },
            { requiredKeys: ['volume', 'mountPath'] },
          ),
          { maxLength: 2 },
        )
      : fc.constant([]),
    secretStores: fc.array(record, { maxLength: 2 }),
    imagePullCredentials: record,
    startupProbe: record,
  }).chain((c) =>
    // `resources` xor `resourceRequirements`.
    c.resources === undefined
      ? opt(requirementsArb).map((rr) =>
          rr === undefined ? c : { ...c, resourceRequirements: rr },
        )
      : fc.constant(c),
  );

const cidrArb = fc
  .record(
    {
      cidr: fc.constantFrom('10.0.0.0/8', '203.0.113.0/24', '2001:db8::/32'),
      except: fc.constant(['10.1.0.0/16']),
    },
    { requiredKeys: ['cidr'] },
  )
  .map((c) => (c.cidr.startsWith('10.') ? c : { cidr: c.cidr }));
const portsArb = fc.array(
  fc.record(
    {
      protocol: fc.constantFrom('TCP', 'UDP'),
      port: fc.integer({ min: 1, max: 1024 }),
      endPort: fc.constant(2048),
    },
    { requiredKeys: ['port'] },
  ),
  { maxLength: 2 },
);
const egressArb = fc.oneof(
  fc.record({ cidr: cidrArb, ports: portsArb }, { requiredKeys: ['cidr'] }),
  fc.record({ httpsHostname: fc.constantFrom('api.example.com', '*.example.org') }),
  fc.record({ dnsName: fc.constant('pypi.org') }),
  fc.record({ tenant: fc.constantFrom('TENANT_SCOPE_SAME_ORG', 'TENANT_SCOPE_SAME_USER') }),
  fc.record({ any: fc.constant(true), ports: portsArb }, { requiredKeys: ['any'] }),
  fc.record({
    selector: fc.record(
      { podLabels: fc.constant({ app: 'db' }), namespaceLabels: fc.constant({ team: 'x' }) },
      { requiredKeys: ['podLabels'] },
    ),
  }),
);
const ingressArb = fc.oneof(
  fc.record({ cidr: cidrArb, ports: portsArb }, { requiredKeys: ['cidr'] }),
  fc.record({ tenant: fc.constant('TENANT_SCOPE_SAME_ORG') }),
  fc.record({ any: fc.constant(true) }),
);
const networkArb = fc.oneof(
  some({
    egress: fc.array(egressArb, { minLength: 1, maxLength: 3 }),
    ingress: fc.array(ingressArb, { maxLength: 2 }),
    denyIngress: fc.constant(false),
    dnsEgress: fc.constantFrom(
      'DNS_EGRESS_MODE_UNSPECIFIED',
      'DNS_EGRESS_MODE_ALLOW',
      'DNS_EGRESS_MODE_DENY',
    ),
  }),
  some({ denyEgress: fc.constant(true), denyIngress: fc.boolean() }),
);

const volumeArb = (n: string) =>
  fc.oneof(
    fc.constant({ name: n }),
    fc.constant({ name: n, volumeId: 'vol-123' }),
    some({
      size: fc.constantFrom('10Gi', '1Gi', 5368709120),
      medium: fc.constantFrom('STORAGE_MEDIUM_UNSPECIFIED', 'STORAGE_MEDIUM_DISK'),
      restoreFromSnapshotId: fc.constant('snap-1'),
    }).map((scratch) => ({ name: n, scratch })),
    fc
      .record({
        size: fc.constantFrom('512Mi', '50%'),
        medium: fc.constant('STORAGE_MEDIUM_MEMORY'),
      })
      .map((scratch) => ({ name: n, scratch })),
  );

export const validSpecArb: fc.Arbitrary<Record<string, unknown>> = fc
  .uniqueArray(name, { maxLength: 2 })
  .chain((volumeNames) =>
    fc
      .tuple(
        fc.tuple(...volumeNames.map(volumeArb)),
        fc.array(containerArb(volumeNames), { minLength: 1, maxLength: 3 }),
        fc.array(containerArb(volumeNames), { maxLength: 1 }),
        some({
          maxLifetimeSeconds: int64(0, 2_592_000),
          networkIds: fc.array(fc.constantFrom('net-1', 'net-2'), { maxLength: 2 }),
          objectStorageAccess: record,
          tags: fc.array(fc.constantFrom('a', 'b'), { maxLength: 2 }),
          network: networkArb,
          annotations: fc.dictionary(
            fc.constantFrom('team', 'example.com/x'),
            fc.constantFrom('v', ''),
          ),
          instanceType: fc.constantFrom('cpu-large', ''),
          runtimeClass: fc.constantFrom('kata-qemu', 'gvisor', ''),
          services: fc.array(record, { maxLength: 2 }),
        }),
        fc.oneof(
          fc.constant({}),
          fc
            .constantFrom('SANDBOX_MODE_UNSPECIFIED', 'SANDBOX_MODE_SERVERLESS')
            .map((mode) => ({ mode })),
          fc
            .uniqueArray(fc.constantFrom('r-1', 'r-2', 'r-3'), { minLength: 1, maxLength: 2 })
            .map((runnerIds) => ({ mode: 'SANDBOX_MODE_CKS', runnerIds })),
        ),
        fc.boolean(),
      )
      .map(([volumes, containers, inits, top, placement, flagPrimary]) => {
        // Unique names across containers and init containers; a primary when there are several.
        const named = containers.map((c, i) => ({ ...c, name: `c${i}` }));
        const spec: Record<string, unknown> = { ...top, ...placement, containers: named };
        if (named.length > 1) {
          if (flagPrimary) named[1] = { ...named[1], primary: true } as (typeof named)[number];
          else spec.primaryContainer = 'c0';
        } else if (flagPrimary) spec.primaryContainer = 'c0';
        if (inits.length) spec.initContainers = inits.map((c, i) => ({ ...c, name: `init${i}` }));
        if (volumes.length) spec.volumes = volumes;
        return JSON.parse(JSON.stringify(spec)) as Record<string, unknown>;
      }),
  );

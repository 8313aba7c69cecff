import {
  PolicySchema,
  EgressRuleSchema,
  POLICY_MAX_ENCODED_BYTES,
  POLICY_TOO_LARGE_MESSAGE,
} from '../src/policy';

describe('PolicySchema (structural)', () => {
  it('accepts the empty policy and the documented GPU example, normalizing int64 strings', () => {
    expect(PolicySchema.parse({})).toEqual({});
    const p = PolicySchema.parse({
      displayName: 'Data science, GPU',
      constraints: {
        resources: {
          defaultCpu: '4',
          defaultMemory: '16Gi',
          maxCpu: '16',
          maxMemory: '128Gi',
          maxGpuCount: '2',
          requireLimits: true,
        },
        instance: { allowedInstanceTypes: ['h100'] },
        image: { allowedRegistries: ['ghcr.io/[GITHUB-ORG]'] },
        network: {
          allowedEgress: [{ cidr: { cidr: '0.0.0.0/0', except: ['169.254.169.254/32'] } }],
        },
      },
    });
    expect(p.constraints?.resources?.maxGpuCount).toBe(2);
  });

  it('accepts numbers for int64 fields and bare numbers for quantities', () => {
    const p = PolicySchema.parse({
      constraints: {
        resources: { maxGpuCount: 0, defaultCpu: 1 },
        lifecycle: { defaultLifetimeSeconds: '3600' },
      },
    });
    expect(p.constraints?.resources?.maxGpuCount).toBe(0);
    expect(p.constraints?.lifecycle?.defaultLifetimeSeconds).toBe(3600);
  });

  it('refuses unknown fields and wrong types with paths', () => {
    const r = PolicySchema.safeParse({
      constraints: { resources: { maxCPU: '4' }, security: { allowPrivileged: 'yes' } },
    });
    expect(r.success).toBe(false);
    const paths = r.success ? [] : r.error.issues.map((i) => i.path.join('.'));
    expect(paths).toContain('constraints.resources');
    expect(paths).toContain('constraints.security.allowPrivileged');
  });

  it('accepts every egress peer shape, including the legacy dnsName spelling', () => {
    for (const rule of [
      { cidr: { cidr: '10.0.0.0/8' } },
      { httpsHostname: 'a.example.com' },
      { dnsName: 'a.example.com' },
      { tenant: 'TENANT_SCOPE_SAME_ORG' },
      { any: true },
      { selector: { podLabels: { a: 'b' } } },
      { any: true, ports: [{ protocol: 'UDP', port: 53, endPort: 54 }] },
    ]) {
      expect(EgressRuleSchema.safeParse(rule).success).toBe(true);
    }
    expect(EgressRuleSchema.safeParse({ tenant: 'TENANT_SCOPE_EVERYONE' }).success).toBe(false);
  });

  it('exports the seed size cap and message', () => {
    expect(POLICY_MAX_ENCODED_BYTES).toBe(262144);
    expect(POLICY_TOO_LARGE_MESSAGE).toBe('policy exceeds 256 KiB limit');
  });
});

import { resolveSandboxSpec, validatePolicy } from '../src/index';

/** Default requests below default limits (Paddock extension `defaultCpuRequest`/`defaultMemoryRequest`). */
describe('policy default requests', () => {
  const burstable = {
    constraints: {
      resources: { defaultCpu: '1', defaultMemory: '512Mi', defaultCpuRequest: '100m', defaultMemoryRequest: '128Mi' },
    },
  };

  it('gives a container that declares no resources the default requests under the default limits', () => {
    const v = validatePolicy(burstable);
    if (!v.ok) throw new Error(JSON.stringify(v.violations));
    const r = resolveSandboxSpec({ policy: v.policy, spec: { containers: [{ image: 'paddock/base' }] } });
    if (!r.ok) throw new Error(JSON.stringify(r.violations));
    const c = r.resolved.containers[0];
    expect(c?.resources.requests).toMatchObject({ cpuMillis: 100, memoryBytes: 128 * 1024 ** 2 });
    expect(c?.resources.limits).toMatchObject({ cpuMillis: 1000, memoryBytes: 512 * 1024 ** 2 });
    expect(c?.resourceSources).toEqual({ cpu: 'policy', memory: 'policy' });
    expect(r.resolved.effectiveResources).toMatchObject({ cpu: '100m', memory: '128Mi' });
    expect(r.resolved.effectiveResourceRequirements[0]).toMatchObject({
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { cpu: '1', memory: '512Mi' },
    });
  });

  it('pairs a default request with the platform default limit when the policy sets no default limit', () => {
    const v = validatePolicy({ constraints: { resources: { defaultCpuRequest: '250m' } } });
    if (!v.ok) throw new Error(JSON.stringify(v.violations));
    const r = resolveSandboxSpec({ policy: v.policy, spec: {} });
    if (!r.ok) throw new Error(JSON.stringify(r.violations));
    expect(r.resolved.containers[0]?.resources.requests.cpuMillis).toBe(250);
    expect(r.resolved.containers[0]?.resources.limits.cpuMillis).toBe(1000);
  });

  it('leaves containers that declare resources alone', () => {
    const v = validatePolicy(burstable);
    if (!v.ok) throw new Error('policy');
    const r = resolveSandboxSpec({ policy: v.policy, spec: { containers: [{ resources: { cpu: '2', memory: '1Gi' } }] } });
    if (!r.ok) throw new Error(JSON.stringify(r.violations));
    expect(r.resolved.containers[0]?.resources.requests).toMatchObject({ cpuMillis: 2000, memoryBytes: 1024 ** 3 });
    expect(r.resolved.containers[0]?.resources.limits).toMatchObject({ cpuMillis: 2000, memoryBytes: 1024 ** 3 });
  });

  it('checks the default limit against maxCpu and the default request against minCpu', () => {
    const v = validatePolicy({ constraints: { resources: { defaultCpu: '1', defaultCpuRequest: '100m', maxCpu: '2', minCpu: '50m' } } });
    expect(v.ok).toBe(true);
    const minAbove = validatePolicy({ constraints: { resources: { defaultCpu: '1', defaultCpuRequest: '100m', minCpu: '200m' } } });
    expect(minAbove.ok).toBe(false);
    if (minAbove.ok) return;
    expect(minAbove.violations).toContainEqual(
      expect.objectContaining({ field: 'constraints.resources.defaultCpuRequest', rule: 'default_outside_bounds' }),
    );
  });

  it('refuses a default request above its default limit, naming the field', () => {
    const v = validatePolicy({ constraints: { resources: { defaultMemory: '256Mi', defaultMemoryRequest: '1Gi' } } });
    expect(v.ok).toBe(false);
    if (v.ok) return;
    expect(v.violations.map((x) => [x.field, x.rule])).toEqual([['constraints.resources.defaultMemoryRequest', 'default_outside_bounds']]);
    expect(v.violations[0]?.description).toContain('exceeds defaultMemory "256Mi"');
    const overPlatform = validatePolicy({ constraints: { resources: { defaultCpuRequest: '2' } } });
    expect(overPlatform.ok).toBe(false);
    if (overPlatform.ok) return;
    expect(overPlatform.violations[0]?.description).toContain('the platform default limit');
  });

  it('refuses a spec whose requests exceed its limits, naming the limit field', () => {
    const r = resolveSandboxSpec({
      policy: {},
      spec: { containers: [{ resourceRequirements: { requests: { cpu: '2', memory: '64Mi' }, limits: { cpu: '1', memory: '32Mi' } } }] },
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.violations.map((x) => x.field).sort()).toEqual([
      'containers[0].resourceRequirements.limits.cpu',
      'containers[0].resourceRequirements.limits.memory',
    ]);
  });
});

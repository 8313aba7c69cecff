import { UNKNOWN, type ValueObject } from '../../src/cty/value';
import { validateRunnerConfig } from '../../src/runner/validate';
import { seedConfig } from './fixtures';

const pathsAndDetails = (config: ValueObject): [string, string][] => validateRunnerConfig(config).map((d) => [JSON.stringify(d.path), d.detail]);

describe('validation of coreweave_sandbox_managed_runner (terraform validate / plan)', () => {
  it('the seed configuration is valid', () => {
    expect(validateRunnerConfig(seedConfig())).toEqual([]);
  });

  it('an upper-case zone is refused on the zone attribute, saying it must be lower case', () => {
    const [d, ...rest] = validateRunnerConfig(seedConfig({ zone: 'US-EAST-04A' }));
    expect(rest).toEqual([]);
    expect(d).toMatchObject({ severity: 'error', summary: 'Invalid zone', path: ['zone'] });
    expect(d?.detail).toContain('zone must be lowercase');
  });

  it('values not known yet are not judged', () => {
    expect(validateRunnerConfig(seedConfig({ zone: UNKNOWN, runner_id: UNKNOWN, policy: UNKNOWN, spec: UNKNOWN }))).toEqual([]);
  });

  it('an unknown release channel is refused on spec.release_channel', () => {
    const config = seedConfig();
    (config.spec as ValueObject).release_channel = 'RELEASE_CHANNEL_BETA';
    expect(pathsAndDetails(config)).toEqual([
      ['["spec","release_channel"]', 'spec.release_channel must be RELEASE_CHANNEL_STABLE or RELEASE_CHANNEL_RAPID; got "RELEASE_CHANNEL_BETA".'],
    ]);
  });

  it('a policy over 256 KiB is refused on policy, with the size', () => {
    const config = seedConfig();
    const images = Array.from({ length: 7000 }, (_, i) => `registry.example.com/team/image-${i}:v1.2.3`);
    ((config.policy as ValueObject).constraints as ValueObject).image = { allowed_registries: null, allowed_images: images };
    const [d, ...rest] = validateRunnerConfig(config);
    expect(rest).toEqual([]);
    expect(d).toMatchObject({ summary: 'Policy too large', path: ['policy'] });
    expect(d?.detail).toMatch(/^policy exceeds 256 KiB limit: the encoded policy is \d+ bytes, the limit is 262144 bytes/);
  });

  it('policy rules of the policy engine come back on the attribute they name, in snake_case', () => {
    const config = seedConfig();
    const constraints = (config.policy as ValueObject).constraints as ValueObject;
    constraints.network = {
      allowed_egress: [{ cidr: { cidr: '10.0.0.1/8', except: null }, https_hostname: null, dns_name: null, https_hostname_except: null, dns_name_except: null, tenant: null, any: null, selector: null, ports: null }],
      default_egress: null,
      deny_https_hostname_rules: null,
      deny_dns: null,
      allowed_ingress: null,
      default_ingress: null,
      dns_egress: null,
    };
    (constraints.resources as ValueObject).max_cpu = 'lots';
    const diags = validateRunnerConfig(config);
    expect(diags.map((d) => d.path)).toEqual([
      ['policy', 'constraints', 'network', 'allowed_egress', 0, 'cidr', 'cidr'],
      ['policy', 'constraints', 'resources', 'max_cpu'],
    ]);
    expect(diags[0]?.detail).toContain('Use the canonical network prefix "10.0.0.0/8"');
    expect(diags[0]?.detail).toMatch(/^policy\.constraints\.network\.allowed_egress\[0\]\.cidr\.cidr: /);
  });

  it('spec settings: cron, duration range, quantities, scaling bounds, affinity JSON, exclusion order', () => {
    const config = seedConfig();
    const spec = config.spec as ValueObject;
    spec.maintenance_policy = {
      windows: [{ cron: 'every saturday', duration_seconds: 30 }],
      exclusions: [{ start_time: '2026-12-02T00:00:00Z', end_time: '2026-12-01T00:00:00Z', reason: null }],
    };
    const overrides = spec.overrides as ValueObject;
    overrides.resources = { cpu_request: 'one', memory_request: null, cpu_limit: null, memory_limit: null };
    overrides.scaling = { replicas: null, autoscaling_enabled: true, min_replicas: 3, max_replicas: 1 };
    overrides.affinity = '[]';
    expect(validateRunnerConfig(config).map((d) => d.path)).toEqual([
      ['spec', 'maintenance_policy', 'windows', 0, 'cron'],
      ['spec', 'maintenance_policy', 'exclusions', 0, 'end_time'],
      ['spec', 'overrides', 'scaling', 'min_replicas'],
      ['spec', 'overrides', 'affinity'],
      ['spec', 'maintenance_policy', 'windows', 0, 'duration_seconds'],
      ['spec', 'overrides', 'resources', 'cpu_request'],
    ]);
  });

  it('runner_id must be a DNS label; policy.base must be a JSON object', () => {
    const config = seedConfig({ runner_id: 'Prod_Runner' });
    (config.policy as ValueObject).base = 'not json';
    expect(validateRunnerConfig(config).map((d) => d.path)).toEqual([['runner_id'], ['policy', 'base']]);
  });
});

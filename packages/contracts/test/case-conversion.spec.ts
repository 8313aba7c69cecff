import { CASE_OPAQUE_MAP_KEYS, camelToSnakeDeep, snakeToCamelDeep } from '../src/case';

describe('snake_case <-> camelCase conversion', () => {
  it('converts the seed runner document (identity, spec, policy)', () => {
    const doc = {
      identity: { zone: 'us-east-1', cluster_name: 'c1', runner_group_id: 'g' },
      spec: {
        release_channel: 'RELEASE_CHANNEL_STABLE',
        maintenance_policy: { windows: [{ cron: '0 9 * * SAT', duration_seconds: 14400 }] },
      },
      policy: {
        display_name: 'default',
        constraints: {
          resources: { default_cpu: '1', max_gpu_count: 0, require_limits: true },
          lifecycle: { default_lifetime_seconds: 3600 },
        },
      },
    };
    expect(snakeToCamelDeep(doc)).toEqual({
      identity: { zone: 'us-east-1', clusterName: 'c1', runnerGroupId: 'g' },
      spec: {
        releaseChannel: 'RELEASE_CHANNEL_STABLE',
        maintenancePolicy: { windows: [{ cron: '0 9 * * SAT', durationSeconds: 14400 }] },
      },
      policy: {
        displayName: 'default',
        constraints: {
          resources: { defaultCpu: '1', maxGpuCount: 0, requireLimits: true },
          lifecycle: { defaultLifetimeSeconds: 3600 },
        },
      },
    });
  });

  it('never converts user map keys (env, labels, annotations, node selectors, selector labels, base)', () => {
    const doc = {
      spec: {
        overrides: {
          env: { ENABLE_LIVE_NETWORK_UPDATE: 'true', my_var: 'x' },
          labels: { app_tier: 'a' },
          annotations: { 'example.com/some_key': 'v' },
          node_selector: { node_pool: 'system' },
        },
      },
      containers: [{ environment_variables: { MY_VAR: '1', lower_case: '2' } }],
      network: {
        egress: [
          { selector: { pod_labels: { app_name: 'db' }, namespace_labels: { team_name: 'a' } } },
        ],
      },
      policy: { base: { node_selector_terms: { a_b: 'c' } } },
    };
    expect(snakeToCamelDeep(doc)).toEqual({
      spec: {
        overrides: {
          env: { ENABLE_LIVE_NETWORK_UPDATE: 'true', my_var: 'x' },
          labels: { app_tier: 'a' },
          annotations: { 'example.com/some_key': 'v' },
          nodeSelector: { node_pool: 'system' },
        },
      },
      containers: [{ environmentVariables: { MY_VAR: '1', lower_case: '2' } }],
      network: {
        egress: [
          { selector: { podLabels: { app_name: 'db' }, namespaceLabels: { team_name: 'a' } } },
        ],
      },
      policy: { base: { node_selector_terms: { a_b: 'c' } } },
    });
    expect(CASE_OPAQUE_MAP_KEYS).toContain('environmentVariables');
  });

  it('round-trips camelCase through snake_case', () => {
    const camel = {
      maxGpuCount: '2',
      httpsHostnameExcept: ['a'],
      sourceIpAllowlist: { cidrs: [] },
      env: { SOME_VAR: '1' },
      endPort: 80,
      memoryGb: 4,
    };
    const snake = camelToSnakeDeep(camel);
    expect(snake).toEqual({
      max_gpu_count: '2',
      https_hostname_except: ['a'],
      source_ip_allowlist: { cidrs: [] },
      env: { SOME_VAR: '1' },
      end_port: 80,
      memory_gb: 4,
    });
    expect(snakeToCamelDeep(snake)).toEqual(camel);
  });

  it('keeps a __proto__ key as data instead of touching the prototype', () => {
    const input = JSON.parse('{"__proto__": {"polluted": true}, "a_b": 1}') as unknown;
    const out = snakeToCamelDeep(input) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__', 'aB']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('leaves scalars and arrays of scalars alone', () => {
    expect(snakeToCamelDeep('a_b')).toBe('a_b');
    expect(snakeToCamelDeep([1, 'x_y', null])).toEqual([1, 'x_y', null]);
  });
});

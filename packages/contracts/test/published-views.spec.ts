import { API_TOKEN_PATTERN, CP_RUNNERS_V1, CP_RUNNER_LOG_V1, CP_TOKEN_PRINCIPAL_V1, PUBLISHED_RELATIONS, hashApiToken } from '../src';

describe('API tokens', () => {
  it('hashes the whole token with SHA-256, lowercase hex', () => {
    // The SHA-256 test vector of "abc" (FIPS 180-2).
    expect(hashApiToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('admits pdk_ + 16..128 base64url characters and nothing else', () => {
    expect(API_TOKEN_PATTERN.test(`pdk_${'A'.repeat(43)}`)).toBe(true);
    for (const bad of ['pdk_short', `pdk_${'A'.repeat(129)}`, `cwic_${'A'.repeat(43)}`, `pdk_${'A'.repeat(42)}=`]) expect(API_TOKEN_PATTERN.test(bad), bad).toBe(false);
  });
});

describe('published relations', () => {
  it('names every relation once, each with a version suffix', () => {
    const names = PUBLISHED_RELATIONS.map((r) => r.name);
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(n).toMatch(/_v\d+$/);
  });

  it('parses a row as pg returns it, and names the column a bad row gets wrong', () => {
    const row = {
      uid: '6f1c0c4e-0000-4000-8000-000000000001',
      organization_id: 'org',
      runner_id: 'r',
      cluster_id: 'c',
      zone: 'z',
      runner_group_id: 'default',
      install_status: 'RUNNER_INSTALL_STATUS_READY',
      target_revision: 2,
      target_image: 'paddock/runner:0.2.0',
      deployment_spec: {
        image: 'paddock/runner:0.2.0',
        imagePullPolicy: 'IfNotPresent',
        gatewayServer: 'gw:443',
        serviceAccount: 'paddock-runner',
        resources: { cpuRequest: '250m' },
        initResources: { cpuRequest: '50m' },
        scaling: { replicas: 1 },
        tolerations: [],
        nodeSelector: {},
        labels: {},
        annotations: {},
        env: {},
        args: [],
        cpuRuntimeClass: '',
        gpuRuntimeClass: 'nvidia',
      },
      policy: null,
      policy_etag: 'e',
    };
    expect(CP_RUNNERS_V1.row.parse(row).deployment_spec.initResources).toEqual({ cpuRequest: '50m' });
    const bad = CP_RUNNERS_V1.row.safeParse({ ...row, target_revision: '2' });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(['target_revision']);
    expect(CP_RUNNER_LOG_V1.row.safeParse({ global_position: '12', transaction_id: '900', runner_uid: row.uid }).success).toBe(true);
    expect(CP_TOKEN_PRINCIPAL_V1.row.safeParse({ token_id: row.uid, organization_id: row.uid, role: 'ROOT' }).success).toBe(false);
  });
});

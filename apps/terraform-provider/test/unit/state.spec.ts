import type { ValueObject } from '../../src/cty/value';
import { planRunner } from '../../src/runner/plan';
import { createBody, runnerToState } from '../../src/runner/state';
import { seedConfig, seedRunner } from './fixtures';

describe('state <-> API mapping', () => {
  const planned = planRunner(null, seedConfig()).planned as ValueObject;

  it('after create, every planned configurable value reads back exactly as planned', () => {
    const state = runnerToState(seedRunner(), planned);
    for (const name of ['runner_id', 'cluster_id', 'zone', 'display_name', 'runner_group_id', 'spec', 'policy']) expect(state[name]).toEqual(planned[name]);
    expect(state).toMatchObject({
      id: 'prod-runner',
      uid: '5f0e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b',
      cluster_name: 'prod',
      etag: 'ec33fbae0001',
      install_status: 'RUNNER_INSTALL_STATUS_PENDING',
      install_error: null,
      active_revision: 0,
      target_revision: 1,
      rollout_in_progress: true,
      last_heartbeat_time: null,
    });
    expect(JSON.parse(state.deployment_spec as string)).toEqual(seedRunner().deploymentSpec);
  });

  it('import (no prior value): the API\'s "unset" forms read as null, what was set reads as set', () => {
    const state = runnerToState(seedRunner(), null);
    expect(state.display_name).toBeNull();
    expect((state.spec as ValueObject).enforce_resource_limits).toBeNull();
    expect(((state.spec as ValueObject).maintenance_policy as ValueObject).exclusions).toBeNull();
    expect(runnerToState(seedRunner({ spec: { ...seedRunner().spec, overrides: {}, maintenancePolicy: { windows: [], exclusions: [] } } }), null).spec).toEqual({
      release_channel: 'RELEASE_CHANNEL_STABLE',
      maintenance_policy: null,
      overrides: null,
      enforce_resource_limits: null,
    });
    expect(((state.policy as ValueObject).constraints as ValueObject).resources).toMatchObject({ max_gpu_count: 0, require_limits: null });
  });

  it('an explicit empty value the configuration holds stays explicit', () => {
    const hint = { ...planned, display_name: '' };
    expect(runnerToState(seedRunner(), hint).display_name).toBe('');
  });

  it('JSON attributes keep the configuration\'s spelling when they mean the same, and take the API\'s when they differ', () => {
    const affinity = '{"nodeAffinity":{"x":1}}';
    const spec = seedRunner().spec;
    const runner = seedRunner({ spec: { ...spec, overrides: { affinity: '{ "nodeAffinity": { "x": 1 } }' } }, policy: { base: { b: 2, a: 1 } } });
    const hint = { ...planned, spec: { ...(planned.spec as ValueObject), overrides: { affinity } }, policy: { base: '{"a":1,"b":2}' } };
    const state = runnerToState(runner, hint);
    expect(((state.spec as ValueObject).overrides as ValueObject).affinity).toBe(affinity);
    expect((state.policy as ValueObject).base).toBe('{"a":1,"b":2}');
    const drifted = runnerToState(seedRunner({ policy: { base: { a: 3 } } }), hint);
    expect((drifted.policy as ValueObject).base).toBe('{"a":3}');
  });

  it('a cluster named by name in the configuration keeps that spelling', () => {
    expect(runnerToState(seedRunner(), { ...planned, cluster_id: 'prod' }).cluster_id).toBe('prod');
    expect(runnerToState(seedRunner(), { ...planned, cluster_id: 'another' }).cluster_id).toBe('0b9c8a5e-6a51-4c55-9c53-1e2f9c0f3a11');
  });

  it('install_error is JSON while the install is FAILED, null otherwise', () => {
    const installError = { reason: 'IMAGE_PULL', message: 'pull failed', diagnosticDetail: '', remediationHints: ['check the registry'], occurredAt: '2026-12-01T10:00:00.000Z' };
    const state = runnerToState(seedRunner({ installStatus: 'RUNNER_INSTALL_STATUS_FAILED', installError }), planned);
    expect(JSON.parse(state.install_error as string)).toEqual(installError);
  });

  it('create body: identity, camelCase spec and policy, a request id for idempotency', () => {
    expect(createBody(planned, 'req-1')).toEqual({
      identity: { runnerId: 'prod-runner', zone: 'us-east-04a', clusterId: '0b9c8a5e-6a51-4c55-9c53-1e2f9c0f3a11', runnerGroupId: 'default' },
      spec: {
        releaseChannel: 'RELEASE_CHANNEL_STABLE',
        maintenancePolicy: { windows: [{ cron: '0 2 * * SAT', durationSeconds: 3600 }] },
        overrides: { resources: { cpuRequest: '1', memoryRequest: '2Gi', cpuLimit: '4', memoryLimit: '8Gi' } },
      },
      policy: seedRunner().policy,
      requestId: 'req-1',
    });
  });

  it('map keys the user chose are sent and read verbatim', () => {
    const spec = { ...(planned.spec as ValueObject), overrides: { env: { MY_VAR: '1', 'example.com/some_key': 'x' } } };
    const body = createBody({ ...planned, spec }, 'r');
    expect((body.spec as { overrides: unknown }).overrides).toEqual({ env: { MY_VAR: '1', 'example.com/some_key': 'x' } });
  });
});

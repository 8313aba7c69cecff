import { UNKNOWN, type ValueObject } from '../../src/cty/value';
import { planRunner } from '../../src/runner/plan';
import { runnerToState } from '../../src/runner/state';
import { runnerPatch } from '../../src/runner/update';
import { UNKNOWN_COMPUTED, seedConfig, seedRunner } from './fixtures';

/** The state after creating the seed's configuration and a refresh: what later plans start from. */
function seedState(): ValueObject {
  const { planned } = planRunner(null, seedConfig());
  return runnerToState(seedRunner(), planned);
}

const withSpec = (change: (spec: ValueObject) => void): ValueObject => {
  const config = seedConfig();
  change(config.spec as ValueObject);
  return config;
};

describe('plan of coreweave_sandbox_managed_runner', () => {
  it('create: the configuration plus the defaults the API applies; computed attributes unknown; id = runner_id', () => {
    const { planned, requiresReplace } = planRunner(null, seedConfig());
    expect(requiresReplace).toEqual([]);
    expect(planned).toMatchObject({ ...UNKNOWN_COMPUTED, id: 'prod-runner', runner_group_id: 'default', display_name: null, zone: 'us-east-04a' });
  });

  it('create without spec plans the platform defaults; without release_channel plans RELEASE_CHANNEL_STABLE', () => {
    expect((planRunner(null, seedConfig({ spec: null })).planned as ValueObject).spec).toEqual({
      release_channel: 'RELEASE_CHANNEL_STABLE',
      maintenance_policy: null,
      overrides: null,
      enforce_resource_limits: null,
    });
    const config = withSpec((s) => (s.release_channel = null));
    expect(((planRunner(null, config).planned as ValueObject).spec as ValueObject).release_channel).toBe('RELEASE_CHANNEL_STABLE');
  });

  it('unchanged configuration: the plan is the prior state itself (no diff)', () => {
    const prior = seedState();
    expect(planRunner(prior, seedConfig()).planned).toBe(prior);
  });

  it.each(['runner_id', 'cluster_id', 'zone'])('changing %s forces replacement', (name) => {
    const { requiresReplace } = planRunner(seedState(), seedConfig({ [name]: 'other-value' }));
    expect(requiresReplace).toEqual([[name]]);
  });

  it('an in-place change keeps the identity and, unless the policy changes, the etag; status becomes unknown', () => {
    const prior = seedState();
    const planned = planRunner(prior, seedConfig({ display_name: 'Prod' })).planned as ValueObject;
    expect(planned).toMatchObject({ id: prior.id, uid: prior.uid, create_time: prior.create_time, etag: prior.etag, install_status: UNKNOWN, update_time: UNKNOWN });
    const config = seedConfig();
    (config.policy as ValueObject).display_name = 'Other';
    expect((planRunner(prior, config).planned as ValueObject).etag).toBe(UNKNOWN);
  });

  it('an unknown configuration value counts as a change', () => {
    const { planned, requiresReplace } = planRunner(seedState(), seedConfig({ zone: UNKNOWN }));
    expect((planned as ValueObject).zone).toBe(UNKNOWN);
    expect(requiresReplace).toEqual([['zone']]);
  });

  it('destroy: a null configuration plans null', () => {
    expect(planRunner(seedState(), null).planned).toBeNull();
  });
});

describe('update mask of an in-place change', () => {
  const patchFor = (config: ValueObject): ReturnType<typeof runnerPatch> => {
    const prior = seedState();
    return runnerPatch(prior, planRunner(prior, config).planned as ValueObject);
  };

  it('removing maintenance_policy names spec.maintenance_policy and leaves it out of the body (reset)', () => {
    const patch = patchFor(withSpec((s) => (s.maintenance_policy = null)));
    expect(patch.updateMask).toEqual(['spec.maintenance_policy']);
    expect(patch.body.spec).not.toHaveProperty('maintenancePolicy');
    expect(patch.body).not.toHaveProperty('policy');
  });

  it('editing overrides sends the whole new object under spec.overrides', () => {
    const patch = patchFor(
      withSpec((s) => {
        const overrides = s.overrides as ValueObject;
        overrides.resources = null;
        overrides.labels = { team: 'ml' };
      }),
    );
    expect(patch.updateMask).toEqual(['spec.overrides']);
    expect((patch.body.spec as Record<string, unknown>).overrides).toEqual({ labels: { team: 'ml' } });
  });

  it('a policy change sends the whole policy with the etag of the refreshed state', () => {
    const config = seedConfig();
    (((config.policy as ValueObject).constraints as ValueObject).lifecycle as ValueObject).default_lifetime_seconds = 7200;
    const patch = patchFor(config);
    expect(patch.updateMask).toEqual(['policy']);
    expect(patch.body.etag).toBe('ec33fbae0001');
    expect(patch.body.policy).toEqual({
      displayName: 'Sandbox constraints',
      constraints: { resources: { defaultCpu: '1', defaultMemory: '2Gi', maxCpu: '8', maxMemory: '32Gi', maxGpuCount: 0 }, lifecycle: { defaultLifetimeSeconds: 7200 } },
    });
  });

  it('an explicit empty policy is sent as {}', () => {
    const patch = patchFor(seedConfig({ policy: { display_name: null, base: null, constraints: null, control_plane_access: null } }));
    expect(patch.body.policy).toEqual({});
  });

  it('removing runner_group_id and display_name resets them; several changes go in one mask', () => {
    const prior = { ...seedState(), runner_group_id: 'gpu', display_name: 'Prod' };
    const patch = runnerPatch(prior, planRunner(prior, seedConfig()).planned as ValueObject);
    expect(patch.updateMask).toEqual(['display_name', 'identity.runner_group_id']);
    expect(patch.body).toEqual({ identity: { runnerGroupId: 'default' } });
  });

  it('nothing changed: an empty mask (the resource reads the runner instead of sending an empty PATCH)', () => {
    const prior = seedState();
    expect(runnerPatch(prior, prior).updateMask).toEqual([]);
  });
});

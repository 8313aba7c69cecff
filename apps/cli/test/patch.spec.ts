import { changedPaths, normalizeForCompare, planPatch } from '../src/patch';

describe('edit -f patch planning', () => {
  it('turns the seed one-line release-channel patch into one mask path', () => {
    const plan = planPatch({ spec: { releaseChannel: 'RELEASE_CHANNEL_RAPID' } });
    expect(plan.mask).toEqual(['spec.release_channel']);
    expect(plan.body).toEqual({ spec: { releaseChannel: 'RELEASE_CHANNEL_RAPID' } });
  });

  it('replaces spec.overrides whole and keeps user map keys', () => {
    const plan = planPatch({
      spec: { overrides: { nodeSelector: { 'node-pool': 'system' }, tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'system', effect: 'NoSchedule' }] } },
    });
    expect(plan.mask).toEqual(['spec.overrides']);
    expect((plan.body.spec as Record<string, unknown>).overrides).toMatchObject({ nodeSelector: { 'node-pool': 'system' } });
  });

  it('an explicit null clears: the path is in the mask and the body omits it', () => {
    const plan = planPatch({ displayName: null, spec: { maintenancePolicy: null } });
    expect(plan.mask).toEqual(['display_name', 'spec.maintenance_policy']);
    expect(plan.body).toEqual({ spec: {} });
  });

  it('carries the etag of the file and the policy path; output-only fields are ignored', () => {
    const plan = planPatch({ etag: 'e1', policy: { constraints: {} }, installStatus: 'RUNNER_INSTALL_STATUS_READY', uid: 'u' });
    expect(plan.mask).toEqual(['policy']);
    expect(plan.etag).toBe('e1');
  });

  it('routes legacy managed_spec to the v1beta2 surface', () => {
    const plan = planPatch({ managedSpec: { allowPrivilegedProfileAnnotations: true } });
    expect(plan.mask).toEqual([]);
    expect(plan.legacyManagedSpec).toEqual({ allowPrivilegedProfileAnnotations: true });
  });

  it('identity: zone and group are mutable, runner id only identifies', () => {
    const plan = planPatch({ identity: { runnerId: 'r1', zone: 'us-east-1', runnerGroupId: 'g' } });
    expect(plan.mask).toEqual(['identity.zone', 'identity.runner_group_id']);
    expect(plan.identityRefs).toEqual({ runnerId: 'r1' });
  });

  it('changedPaths drops no-op values, tolerating server defaults and int64 strings', () => {
    const current = { displayName: 'x', spec: { releaseChannel: 'RELEASE_CHANNEL_STABLE', maintenancePolicy: { windows: [], exclusions: [] } }, policy: { constraints: { resources: { maxGpuCount: '0' } } } };
    const plan = planPatch({ displayName: 'x', spec: { releaseChannel: 'RELEASE_CHANNEL_RAPID', maintenancePolicy: {} }, policy: { constraints: { resources: { maxGpuCount: 0 } } } });
    expect(changedPaths(plan, current).map((d) => d.path)).toEqual(['spec.release_channel']);
    expect(normalizeForCompare({ a: [], b: null, c: { d: '2' } })).toEqual({ c: { d: 2 } });
  });
});

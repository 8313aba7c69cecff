/**
 * The runner lifecycle beyond the seed examples: idempotent create, race-safe uniqueness, heartbeats
 * over NATS (connection status, etag untouched), install reports with fencing, revision history,
 * allowMissing deletes.
 */
import { subjects, type ListManagedRunnersResponse, type ListRunnerRevisionsResponse, type ManagedRunner } from '@paddock/contracts';
import { waitFor } from '@paddock/testing';
import { api, startTestApp, type TestApp } from '../support/app';
import type { ErrorBody } from '../support/errors';
import { createRunner, heartbeat, installReport } from '../support/fixtures';
import { report } from './support';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

/** POST a runner; `T` is the body the test expects back (the runner, or `ErrorBody`). */
const create = <T = ManagedRunner>(body: unknown, query = '') => api<T>(t, 'POST', `/v1/sandbox/managedRunners${query}`, { token: t.adminToken, body });

describe('create', () => {
  it('is idempotent on requestId: a retry returns the first runner, another body under the same id is already_exists', async () => {
    const c = await t.registerCluster(t.adminToken, { name: 'idem', zone: 'us-east-1' });
    const body = { identity: { runnerId: 'idem-runner', zone: 'us-east-1', clusterId: c.id }, policy: {} };
    const first = await create(body, '?requestId=req-1');
    const retry = await create({ ...body, requestId: 'req-1' });
    expect(first.status).toBe(200);
    expect(retry.status).toBe(200);
    expect(retry.body.uid).toBe(first.body.uid);
    const changed = await create<ErrorBody>({ ...body, displayName: 'different' }, '?requestId=req-1');
    expect(changed.status).toBe(409);
    expect(changed.body.code).toBe('already_exists');
    expect(changed.body.details[1]?.fieldViolations?.[0]?.field).toBe('request_id');
    const tooLong = await create<ErrorBody>(body, `?requestId=${'x'.repeat(129)}`);
    expect(tooLong.body).toMatchObject({ code: 'invalid_argument' });
  });

  it('omitted policy: null, usingDefaultPolicy; {} is the explicit empty posture', async () => {
    const a = await t.registerCluster(t.adminToken, { name: 'no-policy', zone: 'us-east-1' });
    const none = await create({ identity: { runnerId: 'no-policy', zone: 'us-east-1', clusterId: a.id } });
    expect(none.status).toBe(200);
    expect(none.body).toMatchObject({ policy: null, usingDefaultPolicy: true });
    const b = await t.registerCluster(t.adminToken, { name: 'empty-policy', zone: 'us-east-1' });
    const empty = await create({ identity: { runnerId: 'empty-policy', zone: 'us-east-1', clusterId: b.id }, policy: {} });
    expect(empty.body).toMatchObject({ policy: {}, usingDefaultPolicy: false });
  });

  it('names the field and rule of invalid specs and policies', async () => {
    const c = await t.registerCluster(t.adminToken, { name: 'invalid', zone: 'us-east-1' });
    const r = await create<ErrorBody>({
      identity: { runnerId: 'invalid', zone: 'us-east-1', clusterId: c.id },
      spec: {
        maintenancePolicy: { windows: [{ cron: 'every day', durationSeconds: 14400 }], exclusions: [{ startTime: '2026-12-02T00:00:00Z', endTime: '2026-12-01T00:00:00Z' }] },
        overrides: { scaling: { minReplicas: 3, maxReplicas: 1 } },
      },
      policy: { constraints: { lifecycle: { defaultLifetimeSeconds: 99_999_999 } } },
    });
    expect(r.status).toBe(400);
    const fields = r.body.details[1]?.fieldViolations?.map((v) => v.field);
    expect(fields).toEqual(
      expect.arrayContaining([
        'runner.spec.maintenance_policy.windows[0].cron',
        'runner.spec.maintenance_policy.exclusions[0].end_time',
        'runner.spec.overrides.scaling.min_replicas',
        expect.stringMatching(/^policy\.constraints\.lifecycle\.defaultLifetimeSeconds/),
      ]),
    );
    const upper = await create<ErrorBody>({ identity: { runnerId: 'invalid', zone: 'US-EAST-1', clusterId: c.id } });
    expect(upper.body.details[1]?.fieldViolations?.[0]).toMatchObject({ field: 'runner.identity.zone', rule: 'lowercase' });
    const typo = await create<ErrorBody>({ identity: { runnerId: 'invalid', zone: 'us-east-1', clusterId: c.id }, spec: { releaseChanel: 'RELEASE_CHANNEL_RAPID' } });
    expect(typo.body.details[1]?.fieldViolations?.[0]).toMatchObject({ field: 'runner.spec.release_chanel', rule: 'known_field' });
  });

  it('one runner per cluster and one runner id per organization hold under concurrent creates', async () => {
    const c = await t.registerCluster(t.adminToken, { name: 'race', zone: 'us-east-1' });
    const sameCluster = await Promise.all(Array.from({ length: 10 }, (_v, i) => create<ManagedRunner | ErrorBody>({ identity: { runnerId: `race-${i}`, zone: 'us-east-1', clusterId: c.id }, policy: {} })));
    expect(sameCluster.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of sameCluster.filter((x) => x.status !== 200)) expect(r.body).toMatchObject({ code: 'already_exists', message: 'a managed runner already exists for this cluster' });

    const clusters = await Promise.all(Array.from({ length: 10 }, (_v, i) => t.registerCluster(t.adminToken, { name: `race-id-${i}`, zone: 'us-east-1' })));
    const sameId = await Promise.all(clusters.map((cl) => create<ManagedRunner | ErrorBody>({ identity: { runnerId: 'race-id', zone: 'us-east-1', clusterId: cl.id }, policy: {} })));
    expect(sameId.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of sameId.filter((x) => x.status !== 200)) expect(r.body).toMatchObject({ code: 'already_exists' });
  });
});

describe('status', () => {
  it('a heartbeat over NATS connects the runner without moving the etag; install reports are fenced', async () => {
    const { clusterId, body } = await createRunner(t, 'hb-runner');
    t.nats.publish(subjects.runnerHeartbeat('hb-runner'), JSON.stringify(heartbeat(t, 'hb-runner', clusterId, { policyEtag: body.etag, usingDefaultPolicy: false })));
    const connected = await waitFor(async () => {
      const r = await api<ManagedRunner>(t, 'GET', '/v1/sandbox/managedRunners/hb-runner', { token: t.adminToken });
      return r.body.connectionStatus === 'RUNNER_CONNECTION_STATUS_CONNECTED' ? r.body : undefined;
    });
    expect(connected.etag).toBe(body.etag);
    expect(connected.lastHeartbeatTime).not.toBeNull();
    const listed = await api<ListManagedRunnersResponse>(t, 'GET', '/v1/sandbox/managedRunners?connectionStatus=CONNECTED', { token: t.adminToken });
    expect(listed.body.managedRunners.map((r) => r.identity.runnerId)).toEqual(['hb-runner']);
    const full = await api<ListManagedRunnersResponse>(t, 'GET', '/v1/sandbox/managedRunners?connectionStatus=RUNNER_CONNECTION_STATUS_CONNECTED', { token: t.adminToken });
    expect(full.body.managedRunners).toHaveLength(1);

    const failed = {
      reason: 'ImagePullBackOff',
      message: 'the runner image could not be pulled',
      remediationHints: ["Add toleration for taint 'workload=gpu:NoSchedule'"],
      occurredAt: '2026-04-24T12:03:11Z',
    };
    await report(t, installReport(t, 'hb-runner', clusterId, { installStatus: 'RUNNER_INSTALL_STATUS_FAILED', installError: failed, activeRevision: 0, fencingToken: 5 }));
    const r1 = await api(t, 'GET', '/v1/sandbox/managedRunners/hb-runner', { token: t.adminToken });
    expect(r1.body).toMatchObject({ installStatus: 'RUNNER_INSTALL_STATUS_FAILED', installError: failed, etag: body.etag });
    // A deposed controller (older lease) cannot overwrite the newer observation.
    await report(t, installReport(t, 'hb-runner', clusterId, { installStatus: 'RUNNER_INSTALL_STATUS_READY', fencingToken: 4 }));
    expect((await api<ManagedRunner>(t, 'GET', '/v1/sandbox/managedRunners/hb-runner', { token: t.adminToken })).body.installStatus).toBe('RUNNER_INSTALL_STATUS_FAILED');
    await report(t, installReport(t, 'hb-runner', clusterId, { installStatus: 'RUNNER_INSTALL_STATUS_READY', fencingToken: 6 }));
    const r2 = await api(t, 'GET', '/v1/sandbox/managedRunners/hb-runner', { token: t.adminToken });
    expect(r2.body).toMatchObject({ installStatus: 'RUNNER_INSTALL_STATUS_READY', installError: null, etag: body.etag });
  });

  it('revisions list what changed, who changed it, when, and the etag of each revision', async () => {
    const { body } = await createRunner(t, 'history');
    t.clock.advance(1000);
    const patched = await api<ManagedRunner>(t, 'PATCH', '/v1/sandbox/managedRunners/history?updateMask=policy,display_name', {
      token: t.adminToken,
      body: { displayName: 'History', policy: { constraints: { lifecycle: { defaultLifetimeSeconds: 120 } } }, etag: body.etag },
    });
    expect(patched.status).toBe(200);
    const r = await api<ListRunnerRevisionsResponse>(t, 'GET', '/v1/sandbox/managedRunners/history/revisions', { token: t.adminToken });
    expect(r.status).toBe(200);
    const revisions = r.body.revisions;
    expect(revisions.map((x) => x.eventType)).toEqual(['RunnerPolicyReplaced', 'RunnerSettingsUpdated', 'RunnerCreated']);
    expect(revisions[0]).toMatchObject({ revision: 3, policyEtag: patched.body.etag, actor: expect.stringMatching(/\S/) as unknown });
    expect(revisions[0]?.changes).toEqual([{ field: 'policy.constraints', after: { lifecycle: { defaultLifetimeSeconds: 120 } } }]);
    expect(revisions[1]?.changes).toEqual([{ field: 'displayName', before: '', after: 'History' }]);
    expect(revisions[1]?.policyEtag).toBe(body.etag);
    expect(revisions[2]?.time).toBe(body.createTime);
  });
});

describe('update', () => {
  it('without a mask (or with *) the whole mutable resource is replaced: a read, edited and sent back, round-trips', async () => {
    const { body } = await createRunner(t, 'full-replace', { spec: { overrides: { env: { LOG_LEVEL: 'debug' } } } });
    const edited = { ...body, displayName: 'Edited', spec: { ...body.spec, releaseChannel: 'RELEASE_CHANNEL_RAPID' } };
    const r = await api(t, 'PATCH', '/v1/sandbox/managedRunners/full-replace', { token: t.adminToken, body: edited });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ displayName: 'Edited', spec: { releaseChannel: 'RELEASE_CHANNEL_RAPID', overrides: { env: { LOG_LEVEL: 'debug' } } }, etag: body.etag });

    // `*` with a sparse body resets what it leaves out to the server defaults.
    const star = await api(t, 'PATCH', '/v1/sandbox/managedRunners/full-replace?updateMask=*', {
      token: t.adminToken,
      body: { identity: { zone: 'us-east-1' }, policy: body.policy, etag: body.etag },
    });
    expect(star.status).toBe(200);
    expect(star.body).toMatchObject({ displayName: '', identity: { runnerGroupId: 'default' }, spec: { releaseChannel: 'RELEASE_CHANNEL_STABLE', overrides: {}, enforceResourceLimits: false } });
  });

  it('refuses, by name, runner settings no runner applies (never stored and shown as if applied)', async () => {
    const { body } = await createRunner(t, 'unapplied');
    const refused = await api<{ error: { details: { fieldViolations?: { field: string; description: string }[] }[] } }>(t, 'PATCH', '/v1/sandbox/managedRunners/unapplied?updateMask=spec.enforce_resource_limits,spec.overrides', {
      token: t.adminToken,
      body: { spec: { enforce_resource_limits: true, overrides: { cpu_runtime_class: 'gvisor', gpu_runtime_class: 'nvidia' } } },
    });
    expect(refused.status).toBe(400);
    const text = JSON.stringify(refused.body);
    for (const field of ['runner.spec.enforce_resource_limits', 'runner.spec.overrides.cpu_runtime_class', 'runner.spec.overrides.gpu_runtime_class']) expect(text).toContain(field);
    expect(text).toContain('constraints.resources.requireLimits');
    expect(text).toContain('constraints.security.defaultGpuRuntimeClass');
    const created = await api(t, 'POST', '/v1/sandbox/managedRunners', {
      token: t.adminToken,
      body: { identity: { runnerId: 'unapplied-2', zone: 'us-east-1', clusterId: body.identity.clusterId }, spec: { enforceResourceLimits: true } },
    });
    expect(created.status).toBe(400);
    expect(JSON.stringify(created.body)).toContain('runner.spec.enforce_resource_limits');
    // Nothing was stored; the setting that asks for nothing (false) is accepted, and no runtime class is shown.
    const read = await api<ManagedRunner>(t, 'GET', '/v1/sandbox/managedRunners/unapplied', { token: t.adminToken });
    expect(read.body.spec).toMatchObject({ enforceResourceLimits: false, overrides: {} });
    expect(read.body.deploymentSpec).toMatchObject({ cpuRuntimeClass: '', gpuRuntimeClass: '' });
    const off = await api(t, 'PATCH', '/v1/sandbox/managedRunners/unapplied?updateMask=spec.enforce_resource_limits', { token: t.adminToken, body: { spec: { enforceResourceLimits: false } } });
    expect(off.status).toBe(200);
  });

  it('snake_case and camelCase mask paths are the same path; snake_case bodies are accepted', async () => {
    const { body } = await createRunner(t, 'snake');
    const r = await api<ManagedRunner>(t, 'PATCH', '/v1/sandbox/managedRunners/snake?updateMask=spec.release_channel,identity.runner_group_id', {
      token: t.adminToken,
      body: { identity: { runner_group_id: 'gpu' }, spec: { release_channel: 'RELEASE_CHANNEL_RAPID', overrides: { env: { LOG_LEVEL: 'x' } } } },
    });
    expect(r.status).toBe(200);
    expect(r.body.identity.runnerGroupId).toBe('gpu');
    expect(r.body.spec).toMatchObject({ releaseChannel: 'RELEASE_CHANNEL_RAPID', overrides: {} });
    const env = await api<ManagedRunner>(t, 'PATCH', '/v1/sandbox/managedRunners/snake?updateMask=spec.overrides', {
      token: t.adminToken,
      body: { spec: { overrides: { env: { LOG_LEVEL: 'debug', MY_VAR: '1' } } } },
    });
    // User map keys are never case-converted.
    expect(env.body.spec.overrides.env).toEqual({ LOG_LEVEL: 'debug', MY_VAR: '1' });
    expect(env.body.deploymentSpec.env).toMatchObject({ LOG_LEVEL: 'debug', MY_VAR: '1', PADDOCK_RUNNER_ID: 'snake' });
    expect(env.body.etag).toBe(body.etag);
    const removeChannel = await api<ErrorBody>(t, 'PATCH', '/v1/sandbox/managedRunners/snake?updateMask=spec.release_channel', { token: t.adminToken, body: {} });
    expect(removeChannel.body.details[1]?.fieldViolations?.[0]?.field).toBe('runner.spec.release_channel');
    const noEtag = await api(t, 'PATCH', '/v1/sandbox/managedRunners/snake?updateMask=policy', { token: t.adminToken, body: { policy: {} } });
    expect(noEtag.body).toMatchObject({ code: 'invalid_argument', details: [{ reason: 'PADDOCK_ETAG_REQUIRED' }, expect.anything()] });
  });
});

describe('delete', () => {
  it('allowMissing makes deleting an absent runner succeed; without it, not_found', async () => {
    const missing = await api(t, 'DELETE', '/v1/sandbox/managedRunners/never-existed', { token: t.adminToken });
    expect(missing.status).toBe(404);
    const allowed = await api(t, 'DELETE', '/v1/sandbox/managedRunners/never-existed?allowMissing=true', { token: t.adminToken });
    expect(allowed.status).toBe(200);
    expect(allowed.body).toEqual({});
  });

  it('a deleting runner refuses changes and a second delete is accepted', async () => {
    await createRunner(t, 'deleting');
    expect((await api(t, 'DELETE', '/v1/sandbox/managedRunners/deleting', { token: t.adminToken })).status).toBe(200);
    expect((await api<ManagedRunner>(t, 'DELETE', '/v1/sandbox/managedRunners/deleting', { token: t.adminToken })).body.installStatus).toBe('RUNNER_INSTALL_STATUS_DELETING');
    const patch = await api<ErrorBody>(t, 'PATCH', '/v1/sandbox/managedRunners/deleting?updateMask=display_name', { token: t.adminToken, body: { displayName: 'x' } });
    expect(patch.body.code).toBe('failed_precondition');
  });

  it('unknown custom methods are not found', async () => {
    await createRunner(t, 'custom');
    const r = await api(t, 'POST', '/v1/sandbox/managedRunners/custom:explode', { token: t.adminToken });
    expect(r.status).toBe(404);
  });
});

/**
 * Object-level authorization (BOLA: another organization's runner ids are indistinguishable from missing
 * ones, on every runner route) and API-2 (masks naming output-only, immutable or legacy fields are
 * refused by name and change nothing; SANDBOX_USER reaches no runner route).
 */
import { Client } from 'pg';
import type { ListManagedRunnersResponse, ManagedRunner, ProfileTemplate } from '@paddock/contracts';
import { api, startTestApp, type TestApp } from '../support/app';
import type { ErrorBody } from '../support/errors';
import { createRunner } from '../support/fixtures';

let t: TestApp;
let pg: Client;
let foreign: { id: string; adminToken: string };
let empty: { id: string; adminToken: string };
let victimUid: string;
let templateId: string;

beforeAll(async () => {
  t = await startTestApp();
  pg = new Client({ connectionString: t.databaseUrl });
  await pg.connect();
  victimUid = (await createRunner(t, 'victim', { policy: { constraints: { lifecycle: { defaultLifetimeSeconds: 60 } } } })).body.uid;
  foreign = await t.createOrganization('attacker');
  empty = await t.createOrganization('bystander');
  await createRunner(t, 'attacker-own', { token: foreign.adminToken });
  const tpl = await api<ProfileTemplate>(t, 'POST', '/v1beta2/sandbox/profile-templates', { token: t.adminToken, body: { profileTemplate: { displayName: 'victim template' } } });
  templateId = tpl.body.profileTemplateId;
});
afterAll(async () => {
  await pg?.end();
  await t?.close();
});

async function streamVersion(uid: string): Promise<number> {
  const r = await pg.query<{ stream_position: string }>('SELECT stream_position FROM es_streams WHERE stream_id = $1', [`managed_runner-${uid}`]);
  return Number(r.rows[0]?.stream_position ?? 0);
}

/** Every runner route with an object id, as [method, path, body]. */
function routes(ref: string): [string, string, unknown][] {
  return [
    ['GET', `/v1/sandbox/managedRunners/${ref}`, undefined],
    ['GET', `/v1/sandbox/managedRunners/${ref}/revisions`, undefined],
    ['PATCH', `/v1/sandbox/managedRunners/${ref}?updateMask=display_name`, { displayName: 'pwned' }],
    ['PATCH', `/v1/sandbox/managedRunners/${ref}?updateMask=policy`, { policy: {}, etag: 'x' }],
    ['DELETE', `/v1/sandbox/managedRunners/${ref}`, undefined],
    ['POST', `/v1/sandbox/managedRunners/${ref}:applyAvailableUpdate`, undefined],
    ['GET', `/v1beta2/sandbox/managed-runners/${ref}`, undefined],
    ['PATCH', `/v1beta2/sandbox/managed-runners/${ref}`, { runner: { managedSpec: { allowPrivilegedProfileAnnotations: true } }, updateMask: 'managedSpec.allowPrivilegedProfileAnnotations' }],
  ];
}

describe('API-1: foreign ids answer exactly like missing ids', () => {
  it('every runner route, by runner id and by uid: 404, byte-identical to an organization that never had it, nothing changed', async () => {
    const versionBefore = await streamVersion(victimUid);
    let cases = 0;
    for (const ref of ['victim', victimUid]) {
      for (const [method, path, body] of routes(ref)) {
        const attacker = await api(t, method, path, { token: foreign.adminToken, ...(body !== undefined ? { body } : {}) });
        const bystander = await api(t, method, path, { token: empty.adminToken, ...(body !== undefined ? { body } : {}) });
        expect(attacker.status, `${method} ${path}`).toBe(404);
        expect(attacker.text, `${method} ${path}`).toBe(bystander.text);
        expect(attacker.text).not.toContain(victimUid === ref ? 'victim' : victimUid);
        cases++;
      }
    }
    expect(cases).toBe(16);
    expect(await streamVersion(victimUid)).toBe(versionBefore);
    const owner = await api(t, 'GET', '/v1/sandbox/managedRunners/victim', { token: t.adminToken });
    expect(owner.body).toMatchObject({ displayName: '', installStatus: 'RUNNER_INSTALL_STATUS_PENDING' });
  });

  it('lists and templates are scoped too', async () => {
    const list = await api(t, 'GET', '/v1/sandbox/managedRunners?runnerId=victim', { token: foreign.adminToken });
    expect(list.body).toEqual({ managedRunners: [], nextPageToken: '' });
    const all = await api<ListManagedRunnersResponse>(t, 'GET', '/v1/sandbox/managedRunners', { token: foreign.adminToken });
    expect(all.body.managedRunners.map((r) => r.identity.runnerId)).toEqual(['attacker-own']);
    const tpl = await api(t, 'GET', `/v1beta2/sandbox/profile-templates/${templateId}`, { token: foreign.adminToken });
    const none = await api(t, 'GET', `/v1beta2/sandbox/profile-templates/${templateId}`, { token: empty.adminToken });
    expect(tpl.status).toBe(404);
    expect(tpl.text).toBe(none.text);
    const tplList = await api(t, 'GET', '/v1beta2/sandbox/profile-templates', { token: foreign.adminToken });
    expect(tplList.body).toEqual({ profileTemplates: [] });
  });

  it('a foreign org may reuse the same runner id: ids are unique per organization only', async () => {
    const r = await createRunner(t, 'victim', { token: foreign.adminToken });
    expect(r.body.uid).not.toBe(victimUid);
    const mine = await api<ManagedRunner>(t, 'GET', '/v1/sandbox/managedRunners/victim', { token: t.adminToken });
    expect(mine.body.uid).toBe(victimUid);
  });
});

describe('API-2: mass assignment through update masks', () => {
  const attempts: [string, Record<string, unknown>, string][] = [
    ['identity.runner_id', { identity: { runnerId: 'renamed' } }, 'immutable'],
    ['identity.runnerId', { identity: { runnerId: 'renamed' } }, 'immutable'],
    ['identity.cluster_id', { identity: { clusterId: 'other' } }, 'immutable'],
    ['identity', { identity: { zone: 'us-west-1', clusterId: 'other' } }, 'immutable'],
    ['identity.cluster_name', { identity: { clusterName: 'x' } }, 'output_only'],
    ['uid', { uid: '00000000-0000-4000-8000-000000000000' }, 'immutable'],
    ['etag', { etag: 'forged' }, 'output_only'],
    ['install_status', { installStatus: 'RUNNER_INSTALL_STATUS_READY' }, 'output_only'],
    ['connectionStatus', { connectionStatus: 'RUNNER_CONNECTION_STATUS_CONNECTED' }, 'output_only'],
    ['target_revision', { targetRevision: '999' }, 'output_only'],
    ['active_revision', { activeRevision: '999' }, 'output_only'],
    ['update_available', { updateAvailable: true }, 'output_only'],
    ['rollout_in_progress', { rolloutInProgress: true }, 'output_only'],
    ['install_error', { installError: null }, 'output_only'],
    ['using_default_policy', { usingDefaultPolicy: true }, 'output_only'],
    ['create_time', { createTime: '2000-01-01T00:00:00Z' }, 'output_only'],
    ['update_time', { updateTime: '2000-01-01T00:00:00Z' }, 'output_only'],
    ['last_heartbeat_time', { lastHeartbeatTime: '2000-01-01T00:00:00Z' }, 'output_only'],
    ['deployment_spec', { deploymentSpec: { image: 'evil' } }, 'output_only'],
    ['deployment_spec.image', { deploymentSpec: { image: 'evil' } }, 'output_only'],
    ['management_mode', {}, 'output_only'],
    ['profile_bindings', { profileBindings: [] }, 'legacy_v1beta2_only'],
    ['spec.allow_privileged_profile_annotations', { spec: {} }, 'legacy_v1beta2_only'],
    ['policy.constraints', { policy: { constraints: {} } }, 'whole_document_only'],
    ['display_name,install_status', { displayName: 'changed', installStatus: 'RUNNER_INSTALL_STATUS_READY' }, 'output_only'],
  ];

  it.each(attempts)('mask %s is refused by name and changes nothing', async (mask, body, rule) => {
    const before = await api(t, 'GET', '/v1/sandbox/managedRunners/victim', { token: t.adminToken });
    const version = await streamVersion(victimUid);
    const r = await api<ErrorBody>(t, 'PATCH', `/v1/sandbox/managedRunners/victim?updateMask=${encodeURIComponent(mask)}`, { token: t.adminToken, body });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_argument');
    const violations = r.body.details.flatMap((d) => d.fieldViolations ?? []);
    const offending = mask.split(',').filter((p) => p !== 'display_name');
    for (const p of offending) expect(violations).toContainEqual(expect.objectContaining({ field: p, rule }));
    expect(r.body.message).toContain(offending[0]);
    expect(await streamVersion(victimUid)).toBe(version);
    const after = await api(t, 'GET', '/v1/sandbox/managedRunners/victim', { token: t.adminToken });
    expect(after.body).toEqual(before.body);
  });

  it('output-only members echoed in a body are ignored, not applied', async () => {
    const before = await api<ManagedRunner>(t, 'GET', '/v1/sandbox/managedRunners/victim', { token: t.adminToken });
    const r = await api<ManagedRunner>(t, 'PATCH', '/v1/sandbox/managedRunners/victim?updateMask=display_name', {
      token: t.adminToken,
      body: { ...before.body, displayName: 'renamed', installStatus: 'RUNNER_INSTALL_STATUS_READY', targetRevision: '999' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ displayName: 'renamed', installStatus: 'RUNNER_INSTALL_STATUS_PENDING', targetRevision: before.body.targetRevision, etag: before.body.etag });
  });

  it('SANDBOX_USER reaches no runner route, reads included', async () => {
    const user = await t.createToken('SANDBOX_USER');
    const version = await streamVersion(victimUid);
    for (const [method, path, body] of [...routes('victim'), ['GET', '/v1/sandbox/managedRunners', undefined] as [string, string, unknown], ['POST', '/v1/sandbox/managedRunners', {}] as [string, string, unknown]]) {
      const r = await api<ErrorBody>(t, method, path, { token: user, ...(body !== undefined ? { body } : {}) });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body.code).toBe('permission_denied');
    }
    expect(await streamVersion(victimUid)).toBe(version);
  });
});

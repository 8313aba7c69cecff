import { ReleaseCatalog } from '../../src/modules/releases/release-catalog';
import type { Release } from '../../src/modules/releases';
import { api, startTestApp, type TestApp } from '../support/app';
import { fieldViolations, type ErrorBody } from '../support/errors';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('releases', () => {
  it('ships seeded releases on both channels, newest first', async () => {
    const r = await api<{ releases: Release[] }>(t, 'GET', '/v1/sandbox/releases?channel=RELEASE_CHANNEL_STABLE', { token: t.adminToken });
    expect(r.status).toBe(200);
    expect(r.body.releases.map((x) => x.version)).toEqual(['0.2.0', '0.1.0']);
    expect(r.body.releases[0]?.image).toBe('paddock/runner:0.2.0');
    const catalog = t.app.get(ReleaseCatalog);
    expect(await catalog.latest('RELEASE_CHANNEL_RAPID')).toMatchObject({ version: '0.3.0', image: 'paddock/runner:0.3.0' });
    expect((await catalog.latest('RELEASE_CHANNEL_UNSPECIFIED')).version).toBe('0.2.0');
  });

  it('the operator publishes a release; it becomes the channel\'s latest with a higher revision', async () => {
    const catalog = t.app.get(ReleaseCatalog);
    const before = await catalog.latest('RELEASE_CHANNEL_STABLE');
    const r = await api<Release>(t, 'POST', '/v1/sandbox/releases', {
      token: t.adminToken,
      body: { channel: 'RELEASE_CHANNEL_STABLE', version: '0.9.0', image: 'paddock/runner:0.9.0' },
    });
    expect(r.status).toBe(200);
    expect(r.body.revision).toBeGreaterThan(before.revision);
    expect(await catalog.latest('RELEASE_CHANNEL_STABLE')).toEqual({ revision: r.body.revision, version: '0.9.0', image: 'paddock/runner:0.9.0' });
    expect(await catalog.byRevision(r.body.revision)).toMatchObject({ channel: 'RELEASE_CHANNEL_STABLE', version: '0.9.0' });
    const dup = await api(t, 'POST', '/v1/sandbox/releases', {
      token: t.adminToken,
      body: { channel: 'RELEASE_CHANNEL_STABLE', version: '0.9.0', image: 'paddock/runner:0.9.0' },
    });
    expect(dup.status).toBe(409);
  });

  it('only the operator may publish; bad input names the field', async () => {
    const other = await t.createOrganization('tenant');
    const denied = await api(t, 'POST', '/v1/sandbox/releases', {
      token: other.adminToken,
      body: { channel: 'RELEASE_CHANNEL_STABLE', version: '1.0.0', image: 'x' },
    });
    expect(denied.status).toBe(403);
    const bad = await api<ErrorBody>(t, 'POST', '/v1/sandbox/releases', { token: t.adminToken, body: { channel: 'NIGHTLY', version: 'one', image: '' } });
    expect(bad.status).toBe(400);
    const fields = fieldViolations(bad.body).map((v) => v.field);
    expect(fields.sort()).toEqual(['channel', 'image', 'version']);
    const badQuery = await api<ErrorBody>(t, 'GET', '/v1/sandbox/releases?channel=NIGHTLY', { token: t.adminToken });
    expect(badQuery.status).toBe(400);
    expect(badQuery.body.message).toMatch(/^channel: channel must be one of/);
  });
});

import type { Cluster, ListClustersResponse } from '@paddock/contracts';
import { api, startTestApp, type TestApp } from '../support/app';
import { fieldViolations, type ErrorBody } from '../support/errors';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('clusters', () => {
  it('registers with a server-assigned UUID and lists it (cwic cluster get)', async () => {
    const r = await api<Cluster>(t, 'POST', '/v1/clusters', { token: t.adminToken, body: { name: 'prod-east', zone: 'us-east-04a' } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown, name: 'prod-east', zone: 'us-east-04a', createTime: t.clock.now().toISOString() });
    const list = await api<ListClustersResponse>(t, 'GET', '/v1/clusters', { token: t.adminToken });
    expect(list.body.clusters).toContainEqual(r.body);
    expect((await api(t, 'GET', `/v1/clusters/${r.body.id}`, { token: t.adminToken })).body).toEqual(r.body);
    expect((await api(t, 'GET', '/v1/clusters/prod-east', { token: t.adminToken })).body).toEqual(r.body);
  });

  it('is idempotent by name: the same name and zone return the existing cluster', async () => {
    const first = await api(t, 'POST', '/v1/clusters', { token: t.adminToken, body: { name: 'idem', zone: 'eu-west-1' } });
    t.clock.advance(60_000);
    const again = await api(t, 'POST', '/v1/clusters', { token: t.adminToken, body: { name: 'idem', zone: 'eu-west-1' } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const list = await api<ListClustersResponse>(t, 'GET', '/v1/clusters', { token: t.adminToken });
    expect(list.body.clusters.filter((c) => c.name === 'idem')).toHaveLength(1);
  });

  it('the same name in another zone is already_exists', async () => {
    await t.registerCluster(t.adminToken, { name: 'moving', zone: 'us-east-1' });
    const r = await api<ErrorBody>(t, 'POST', '/v1/clusters', { token: t.adminToken, body: { name: 'moving', zone: 'us-west-1' } });
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('already_exists');
    expect(r.body.message).toContain('us-east-1');
  });

  it('the same name in two organizations is two clusters', async () => {
    const other = await t.createOrganization('o2');
    const a = await t.registerCluster(t.adminToken, { name: 'shared-name', zone: 'us-east-1' });
    const b = await t.registerCluster(other.adminToken, { name: 'shared-name', zone: 'us-east-1' });
    expect(a.id).not.toBe(b.id);
  });

  it('rejects an uppercase zone with "zone must be lowercase", and names the missing fields', async () => {
    const upper = await api<ErrorBody>(t, 'POST', '/v1/clusters', { token: t.adminToken, body: { name: 'c1', zone: 'US-East-1' } });
    expect(upper.status).toBe(400);
    expect(upper.body.code).toBe('invalid_argument');
    expect(upper.body.message).toBe('zone: zone must be lowercase');
    const missing = await api<ErrorBody>(t, 'POST', '/v1/clusters', { token: t.adminToken, body: {} });
    const fields = fieldViolations(missing.body).map((v) => v.field);
    expect(fields.sort()).toEqual(['name', 'zone']);
    const badName = await api<ErrorBody>(t, 'POST', '/v1/clusters', { token: t.adminToken, body: { name: 'Bad_Name', zone: 'us-east-1' } });
    expect(badName.body.message).toMatch(/^name: name must be a DNS label/);
  });

  it('unknown clusters are not_found', async () => {
    const r = await api(t, 'GET', '/v1/clusters/00000000-0000-4000-8000-000000000000', { token: t.adminToken });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ code: 'not_found', message: 'cluster "00000000-0000-4000-8000-000000000000" not found', details: [] });
  });
});

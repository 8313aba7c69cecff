import { Client } from 'pg';
import { waitFor } from '@paddock/testing';
import { TokensService, type ApiTokenView, type IssuedToken } from '../../src/modules/identity/tokens.service';
import { api, startTestApp, type TestApp } from '../support/app';

describe('bootstrap', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('PADDOCK_BOOTSTRAP_TOKEN becomes an admin token of the operator organization', async () => {
    const who = await api(t, 'GET', '/v1/auth/whoami', { token: t.adminToken });
    expect(who.status).toBe(200);
    expect(who.body).toMatchObject({ organization: { id: t.organizationId, name: 'default' }, role: 'SANDBOX_ADMIN', operator: true, token: { name: 'bootstrap' } });
  });

  it('is idempotent: a restart neither duplicates the organization nor prints a new token', async () => {
    const tokens = t.app.get(TokensService);
    const again = await tokens.bootstrapOperator({});
    expect(again).toEqual({ organizationId: t.organizationId, created: false });
    const withToken = await tokens.bootstrapOperator({ bootstrapToken: t.adminToken });
    expect(withToken).toEqual({ organizationId: t.organizationId, created: false });
    const list = await api<{ tokens: ApiTokenView[] }>(t, 'GET', '/v1/tokens', { token: t.adminToken });
    expect(list.body.tokens.filter((x) => x.name === 'bootstrap')).toHaveLength(1);
  });
});

describe('revocation with a token cache', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { PADDOCK_TOKEN_CACHE_TTL_MS: '300' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a revocation through this instance takes effect at once', async () => {
    const created = await api<IssuedToken>(t, 'POST', '/v1/tokens', { token: t.adminToken, body: { name: 'cached', role: 'SANDBOX_USER' } });
    expect((await api(t, 'GET', '/v1/clusters', { token: created.body.token })).status).toBe(200);
    await api(t, 'DELETE', `/v1/tokens/${created.body.id}`, { token: t.adminToken });
    expect((await api(t, 'GET', '/v1/clusters', { token: created.body.token })).status).toBe(401);
  });

  it('a revocation made elsewhere (another replica) takes effect within the cache TTL', async () => {
    const created = await api<IssuedToken>(t, 'POST', '/v1/tokens', { token: t.adminToken, body: { name: 'elsewhere', role: 'SANDBOX_USER' } });
    expect((await api(t, 'GET', '/v1/clusters', { token: created.body.token })).status).toBe(200);
    const c = new Client({ connectionString: t.databaseUrl });
    await c.connect();
    await c.query('UPDATE cp_api_tokens SET revoked_at = now() WHERE id = $1', [created.body.id]);
    await c.end();
    const revokedAt = Date.now();
    await waitFor(async () => (await api(t, 'GET', '/v1/clusters', { token: created.body.token })).status === 401, {
      timeoutMs: 2_000,
      what: 'revocation to take effect',
    });
    expect(Date.now() - revokedAt).toBeLessThan(300 + 500);
  });
});

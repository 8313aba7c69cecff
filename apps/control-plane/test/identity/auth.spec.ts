import type { ListClustersResponse } from '@paddock/contracts';
import type { ApiTokenView, IssuedToken, OrganizationView } from '../../src/modules/identity';
import { api, startTestApp, type TestApp } from '../support/app';
import { fieldViolation, fieldViolations, type ErrorBody } from '../support/errors';

interface TokenList {
  tokens: ApiTokenView[];
}

let t: TestApp;
let userToken: string;
beforeAll(async () => {
  t = await startTestApp();
  userToken = await t.createToken('SANDBOX_USER');
});
afterAll(async () => {
  await t?.close();
});

const body401 = async (token: string | undefined): Promise<{ status: number; text: string; wwwAuth: string | null }> => {
  const r = await api(t, 'GET', '/v1/clusters', token === undefined ? {} : { headers: { authorization: token } });
  return { status: r.status, text: r.text, wwwAuth: r.headers.get('www-authenticate') };
};

describe('authentication', () => {
  it('malformed, unknown and revoked tokens get byte-identical 401 bodies', async () => {
    const created = await api<IssuedToken>(t, 'POST', '/v1/tokens', { token: t.adminToken, body: { name: 'to revoke', role: 'SANDBOX_USER' } });
    expect(created.status).toBe(200);
    const revokedToken = created.body.token;
    expect((await api(t, 'GET', '/v1/clusters', { token: revokedToken })).status).toBe(200);
    expect((await api<ApiTokenView>(t, 'DELETE', `/v1/tokens/${created.body.id}`, { token: t.adminToken })).body.revokeTime).toBeTruthy();

    const malformed = await body401('Bearer not-a-token');
    const wrongScheme = await body401(`Basic ${revokedToken}`);
    const unknown = await body401(`Bearer pdk_${'A'.repeat(43)}`);
    const revoked = await body401(`Bearer ${revokedToken}`);
    for (const r of [malformed, wrongScheme, unknown, revoked]) {
      expect(r.status).toBe(401);
      expect(r.wwwAuth).toBe('Bearer realm="paddock"');
    }
    expect(new Set([malformed.text, wrongScheme.text, unknown.text, revoked.text]).size).toBe(1);
    expect(JSON.parse(revoked.text)).toEqual({
      code: 'unauthenticated',
      message: 'the API token is invalid, unknown or revoked; create a new one with POST /v1/tokens',
      details: [],
    });
  });

  it('a missing token is unauthenticated too', async () => {
    const r = await body401(undefined);
    expect(r.status).toBe(401);
    expect((JSON.parse(r.text) as ErrorBody).code).toBe('unauthenticated');
  });

  it('public routes need no token', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics', '/openapi.json']) {
      expect((await api(t, 'GET', path)).status, path).toBe(200);
    }
  });
});

describe('authorization', () => {
  it('a SANDBOX_USER token on an admin route is permission_denied (403)', async () => {
    const r = await api<ErrorBody>(t, 'POST', '/v1/tokens', { token: userToken, body: { name: 'x', role: 'SANDBOX_USER' } });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('permission_denied');
    expect(r.body.message).toContain('SANDBOX_ADMIN');
    expect((await api(t, 'POST', '/v1/clusters', { token: userToken, body: { name: 'c', zone: 'z' } })).status).toBe(403);
  });

  it('SANDBOX_ADMIN implies SANDBOX_USER; a user may read clusters', async () => {
    expect((await api(t, 'GET', '/v1/clusters', { token: userToken })).status).toBe(200);
    expect((await api(t, 'GET', '/v1/clusters', { token: t.adminToken })).status).toBe(200);
  });

  it('operator endpoints accept only the operator organization\'s admins', async () => {
    const other = await t.createOrganization('acme');
    const denied = await api(t, 'POST', '/v1/organizations', { token: other.adminToken, body: { name: 'evil' } });
    expect(denied.status).toBe(403);
    const userDenied = await api(t, 'POST', '/v1/organizations', { token: userToken, body: { name: 'evil' } });
    expect(userDenied.status).toBe(403);
    const ok = await api<OrganizationView & { adminToken: IssuedToken }>(t, 'POST', '/v1/organizations', { token: t.adminToken, body: { name: 'globex' } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ name: 'globex', adminToken: { role: 'SANDBOX_ADMIN' } });
    const who = await api(t, 'GET', '/v1/auth/whoami', { token: ok.body.adminToken.token });
    expect(who.body).toMatchObject({ organization: { id: ok.body.id, name: 'globex' }, role: 'SANDBOX_ADMIN', operator: false });
  });
});

describe('tokens API', () => {
  it('creates a token shown once, lists without secrets, whoami names it', async () => {
    const created = await api<IssuedToken>(t, 'POST', '/v1/tokens', { token: t.adminToken, body: { name: 'ci', role: 'SANDBOX_USER' } });
    expect(created.body.token).toMatch(/^pdk_[A-Za-z0-9_-]{43}$/);
    expect(created.body.tokenPrefix).toBe(created.body.token.slice(0, 8));
    const list = await api<TokenList>(t, 'GET', '/v1/tokens', { token: t.adminToken });
    const listed = list.body.tokens.find((x) => x.id === created.body.id);
    expect(listed).toMatchObject({ name: 'ci', role: 'SANDBOX_USER', revokeTime: null });
    expect(list.text).not.toContain(created.body.token);
    expect(Object.keys(listed ?? {})).not.toContain('token');
    const who = await api(t, 'GET', '/v1/auth/whoami', { token: created.body.token });
    expect(who.body).toMatchObject({ organization: { id: t.organizationId }, role: 'SANDBOX_USER', token: { id: created.body.id, name: 'ci' } });
  });

  it('validation errors name the field and the rule', async () => {
    const r = await api<ErrorBody>(t, 'POST', '/v1/tokens', { token: t.adminToken, body: { name: '', role: 'ROOT' } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_argument');
    expect(fieldViolations(r.body).map((v) => v.field).sort()).toEqual(['name', 'role']);
    expect(fieldViolation(r.body, 'role').description).toBe('role must be one of SANDBOX_ADMIN, SANDBOX_USER');
  });
});

describe('organization isolation', () => {
  it('clusters and tokens of another organization are invisible and not_found', async () => {
    const other = await t.createOrganization('initech');
    const mine = await t.registerCluster(t.adminToken, { name: 'iso-mine', zone: 'us-east-1' });
    const theirs = await t.registerCluster(other.adminToken, { name: 'iso-theirs', zone: 'us-west-1' });

    const myList = await api<ListClustersResponse>(t, 'GET', '/v1/clusters', { token: t.adminToken });
    expect(myList.body.clusters.map((c) => c.id)).toContain(mine.id);
    expect(myList.body.clusters.map((c) => c.id)).not.toContain(theirs.id);
    const foreign = await api<ErrorBody>(t, 'GET', `/v1/clusters/${theirs.id}`, { token: t.adminToken });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('not_found');

    const theirToken = await api<IssuedToken>(t, 'POST', '/v1/tokens', { token: other.adminToken, body: { name: 'theirs', role: 'SANDBOX_USER' } });
    const revokeForeign = await api<ErrorBody>(t, 'DELETE', `/v1/tokens/${theirToken.body.id}`, { token: t.adminToken });
    expect(revokeForeign.status).toBe(404);
    expect(revokeForeign.body.code).toBe('not_found');
    expect((await api(t, 'GET', '/v1/clusters', { token: theirToken.body.token })).status).toBe(200);
    const myTokens = await api<TokenList>(t, 'GET', '/v1/tokens', { token: t.adminToken });
    expect(myTokens.body.tokens.map((x) => x.id)).not.toContain(theirToken.body.id);
  });
});

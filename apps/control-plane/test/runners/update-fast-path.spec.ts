/**
 * `PATCH` and `GET /v1/sandbox/managedRunners/{id}` are answered before Nest's pipeline. Their
 * refusals must read exactly as those of the routes Nest's guard and exception filter answer: the
 * same status, body and headers. `DELETE` on the same path and `GET .../revisions` (same role)
 * are the Nest-served comparisons; the Nest-served list shows the runner the GET must show.
 */
import type { ListManagedRunnersResponse, ManagedRunner } from '@paddock/contracts';
import { api, startTestApp, type TestApp } from '../support/app';
import { fieldViolation, type ErrorBody } from '../support/errors';
import { createRunner } from '../support/fixtures';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await createRunner(t, 'fast-runner');
  await createRunner(t, 'get-runner');
});
afterAll(async () => {
  await t?.close();
});

const PATH = '/v1/sandbox/managedRunners/fast-runner';

it('authentication and role refusals are those of the guard, header included', async () => {
  const user = await t.createToken('SANDBOX_USER');
  const cases: { name: string; headers: Record<string, string> }[] = [
    { name: 'no token', headers: {} },
    { name: 'malformed header', headers: { authorization: 'Token abc' } },
    { name: 'unknown token', headers: { authorization: `Bearer pdk_${'A'.repeat(43)}` } },
    { name: 'a SANDBOX_USER token', headers: { authorization: `Bearer ${user}` } },
  ];
  for (const c of cases) {
    const patched = await api<ErrorBody>(t, 'PATCH', `${PATH}?updateMask=display_name`, { headers: c.headers, body: { displayName: 'x' } });
    const deleted = await api<ErrorBody>(t, 'DELETE', PATH, { headers: c.headers });
    expect(patched.status, c.name).toBe(deleted.status);
    expect(patched.body, c.name).toEqual(deleted.body);
    expect(patched.headers.get('www-authenticate'), c.name).toBe(deleted.headers.get('www-authenticate'));
    expect(patched.headers.get('content-type'), c.name).toBe(deleted.headers.get('content-type'));
    expect(patched.headers.get('x-request-id'), c.name).toBeTruthy();
  }
  const none = await api<ErrorBody>(t, 'PATCH', `${PATH}?updateMask=display_name`, { body: { displayName: 'x' } });
  expect(none.status).toBe(401);
  expect(none.body.code).toBe('unauthenticated');
  const forbidden = await api<ErrorBody>(t, 'PATCH', `${PATH}?updateMask=display_name`, { token: user, body: { displayName: 'x' } });
  expect(forbidden.status).toBe(403);
  expect(forbidden.body.message).toBe('this operation requires the SANDBOX_ADMIN role; the token has SANDBOX_USER');
});

it('validation refusals name the field and rule; the runner is unchanged', async () => {
  const before = await api<ManagedRunner>(t, 'GET', PATH, { token: t.adminToken });
  const r = await api<ErrorBody>(t, 'PATCH', `${PATH}?updateMask=identity.zone`, { token: t.adminToken, body: { identity: { zone: 'US-EAST-1' } } });
  expect(r.status).toBe(400);
  expect(r.body.code).toBe('invalid_argument');
  expect(fieldViolation(r.body, 'runner.identity.zone').rule).toBe('lowercase');
  const missing = await api<ErrorBody>(t, 'PATCH', '/v1/sandbox/managedRunners/nobody?updateMask=display_name', { token: t.adminToken, body: { displayName: 'x' } });
  expect(missing.status).toBe(404);
  expect(missing.body.message).toBe('managed runner nobody not found');
  const after = await api<ManagedRunner>(t, 'GET', PATH, { token: t.adminToken });
  expect(after.body).toEqual(before.body);
});

const GET_PATH = '/v1/sandbox/managedRunners/get-runner';
/** Headers that differ between any two responses, whichever path served them. */
const PER_RESPONSE = new Set(['date', 'x-request-id', 'content-length', 'keep-alive', 'connection']);
const stableHeaders = (h: Headers): Record<string, string> => Object.fromEntries([...h.entries()].filter(([k]) => !PER_RESPONSE.has(k)));

it('GET: the body is the runner as the list shows it (etag included), with the same headers', async () => {
  const got = await api<ManagedRunner>(t, 'GET', GET_PATH, { token: t.adminToken });
  const listed = await api<ListManagedRunnersResponse>(t, 'GET', '/v1/sandbox/managedRunners?runnerId=get-runner', { token: t.adminToken });
  expect(got.status).toBe(200);
  expect(listed.body.managedRunners).toHaveLength(1);
  expect(got.body).toEqual(listed.body.managedRunners[0]);
  expect(got.body.etag).toMatch(/\S/);
  expect(stableHeaders(got.headers)).toEqual(stableHeaders(listed.headers));
  expect(got.headers.get('x-request-id')).toBeTruthy();
  // By uid, as the controller resolves it.
  const byUid = await api<ManagedRunner>(t, 'GET', `/v1/sandbox/managedRunners/${got.body.uid}`, { token: t.adminToken });
  expect(byUid.body).toEqual(got.body);
});

it('GET: authentication, role and not-found refusals are those of the guard and filter, headers included', async () => {
  const user = await t.createToken('SANDBOX_USER');
  const cases: { name: string; path: string; headers: Record<string, string> }[] = [
    { name: 'no token', path: GET_PATH, headers: {} },
    { name: 'malformed header', path: GET_PATH, headers: { authorization: 'Token abc' } },
    { name: 'unknown token', path: GET_PATH, headers: { authorization: `Bearer pdk_${'A'.repeat(43)}` } },
    { name: 'a SANDBOX_USER token', path: GET_PATH, headers: { authorization: `Bearer ${user}` } },
    { name: 'no such runner', path: '/v1/sandbox/managedRunners/nobody', headers: { authorization: `Bearer ${t.adminToken}` } },
  ];
  for (const c of cases) {
    const got = await api<ErrorBody>(t, 'GET', c.path, { headers: c.headers });
    const viaNest = await api<ErrorBody>(t, 'GET', `${c.path}/revisions`, { headers: c.headers });
    expect(got.status, c.name).toBe(viaNest.status);
    expect(got.body, c.name).toEqual(viaNest.body);
    expect(stableHeaders(got.headers), c.name).toEqual(stableHeaders(viaNest.headers));
    expect(got.headers.get('x-request-id'), c.name).toBeTruthy();
  }
  const none = await api<ErrorBody>(t, 'GET', GET_PATH);
  expect(none.status).toBe(401);
  expect(none.headers.get('www-authenticate')).toBe('Bearer realm="paddock"');
  const forbidden = await api<ErrorBody>(t, 'GET', GET_PATH, { token: user });
  expect(forbidden.status).toBe(403);
  expect(forbidden.body.message).toBe('this operation requires the SANDBOX_ADMIN role; the token has SANDBOX_USER');
  const missing = await api<ErrorBody>(t, 'GET', '/v1/sandbox/managedRunners/nobody', { token: t.adminToken });
  expect(missing.status).toBe(404);
  expect(missing.body.message).toBe('managed runner nobody not found');
});

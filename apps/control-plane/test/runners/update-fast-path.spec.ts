/**
 * `PATCH /v1/sandbox/managedRunners/{id}` is answered before Nest's pipeline. Its refusals must
 * read exactly as those of the routes Nest's guard and exception filter answer: the same status,
 * body and headers. `DELETE` on the same path is the Nest-served comparison.
 */
import type { ManagedRunner } from '@paddock/contracts';
import { api, startTestApp, type TestApp } from '../support/app';
import { fieldViolation, type ErrorBody } from '../support/errors';
import { createRunner } from '../support/fixtures';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await createRunner(t, 'fast-runner');
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

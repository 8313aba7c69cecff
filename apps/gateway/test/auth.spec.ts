import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { Client } from 'pg';
import type { RunningGateway } from '../src/app';
import { TokenAuthenticator } from '../src/auth/token-authenticator';
import { http, startGateway, startInfra, watchRunnerTraffic, type Infra } from './support/infra';

/**
 * GW-7: malformed, unknown, revoked and foreign-organization credentials never reach a runner
 * and all get the same bytes back; a foreign sandbox id is indistinguishable from a missing one.
 */
describe('gateway authentication and tenant isolation (GW-7)', () => {
  let infra: Infra;
  let gw: RunningGateway;
  let orgA: string;
  let adminA: string;
  let tokenA: string;
  let tokenB: string;
  let revoked: string;
  const sandboxOfA = randomUUID();

  beforeAll(async () => {
    infra = await startInfra();
    // No runner exists here; a long grace keeps the reconciler from failing the fixture row as RUNNER_LOST.
    gw = await startGateway(infra, { GATEWAY_RUNNER_LOST_GRACE_MS: '600000' });
    const a = await infra.cp.createOrganization('org-a');
    const b = await infra.cp.createOrganization('org-b');
    orgA = a.id;
    adminA = a.adminToken;
    tokenA = (await infra.cp.issueToken('SANDBOX_USER', adminA)).token;
    tokenB = b.adminToken;
    const r = await infra.cp.issueToken('SANDBOX_USER', adminA);
    await infra.cp.revokeToken(r.id, adminA);
    revoked = r.token;
    // A sandbox row of org A, as placement would have written it (no runner is needed to prove isolation).
    await sql`
      INSERT INTO gw_sandboxes (id, organization_id, request_fingerprint, spec, state, runner_id, placement, create_time, updated_at, runner_acknowledged)
      VALUES (${sandboxOfA}, ${orgA}::uuid, 'x', '{}'::jsonb, 'STATE_RUNNING', 'runner-a', '{"candidates":[],"verdicts":[],"attempts":[],"winner":"runner-a","decidedAt":"2026-01-01T00:00:00Z"}'::jsonb, now(), now(), true)`.execute(gw.db);
  });

  afterAll(async () => {
    await gw?.close();
    await infra?.stop();
  });

  it('gives byte-identical 401s to missing, malformed, unknown, revoked and deleted-org tokens, and none reaches a runner', async () => {
    // A token whose organization row is gone (no API deletes organizations; the database's
    // administrator does it here, past the foreign key, as a botched manual cleanup would).
    const gone = await infra.cp.createOrganization('gone');
    const orphan = { token: gone.adminToken };
    const admin = new Client({ connectionString: infra.adminUrl });
    await admin.connect();
    try {
      await admin.query('ALTER TABLE cp_api_tokens DISABLE TRIGGER ALL');
      await admin.query('DELETE FROM cp_organizations WHERE id = $1::uuid', [gone.id]);
      await admin.query('ALTER TABLE cp_api_tokens ENABLE TRIGGER ALL');
    } finally {
      await admin.end();
    }

    const traffic = await watchRunnerTraffic(infra.nats);
    const bad: (string | undefined)[] = [
      undefined,
      '',
      'not-a-token',
      'pdk_short',
      `pdk_${'A'.repeat(43)}`,
      `${tokenA}x`,
      revoked,
      orphan.token,
      `cwic_${'A'.repeat(43)}`,
    ];
    const calls: [string, string, unknown?][] = [
      ['POST', '/v1/sandboxes', { spec: {} }],
      ['GET', `/v1/sandboxes/${sandboxOfA}`],
      ['POST', `/v1/sandboxes/${sandboxOfA}:exec`, { command: ['true'] }],
      ['GET', '/v1/sandboxes'],
      ['DELETE', `/v1/sandboxes/${sandboxOfA}`],
      ['GET', `/v1/sandboxes/${sandboxOfA}/logs`],
    ];
    const bodies = new Set<string>();
    for (const token of bad) {
      for (const [method, path, body] of calls) {
        const r = await http(gw.url, method, path, token, body);
        expect(r.status, `${method} ${path} with ${String(token)}`).toBe(401);
        bodies.add(r.text);
      }
    }
    expect([...bodies]).toEqual([JSON.stringify({ code: 'unauthenticated', message: 'missing or invalid API token', details: [] })]);
    // The sandbox of A is still RUNNING: nothing reached its runner.
    expect(traffic.count()).toBe(0);
    await traffic.close();
  });

  it('answers a foreign sandbox id exactly like a missing one, without contacting a runner', async () => {
    const traffic = await watchRunnerTraffic(infra.nats);
    const missing = randomUUID();
    for (const [method, suffix, body] of [
      ['GET', '', undefined],
      ['POST', ':exec', { command: ['true'] }],
      ['GET', ':readFile?path=/etc/hostname', undefined],
      ['DELETE', '', undefined],
      ['GET', '/logs', undefined],
    ] as const) {
      const foreign = await http(gw.url, method, `/v1/sandboxes/${sandboxOfA}${suffix}`, tokenB, body);
      const absent = await http(gw.url, method, `/v1/sandboxes/${missing}${suffix}`, tokenB, body);
      expect(foreign.status).toBe(404);
      expect(foreign.text).toBe(absent.text);
      expect(foreign.json).toMatchObject({ code: 'not_found', details: [{ reason: 'CWSANDBOX_SANDBOX_NOT_FOUND' }] });
    }
    const listB = await http(gw.url, 'GET', '/v1/sandboxes?showTerminated=true', tokenB);
    expect(listB.json).toEqual({ sandboxes: [], nextPageToken: '' });
    expect(traffic.count()).toBe(0);
    await traffic.close();
    // Org A sees its own sandbox.
    const own = await http(gw.url, 'GET', `/v1/sandboxes/${sandboxOfA}`, tokenA);
    expect(own.status).toBe(200);
    expect(own.json).toMatchObject({ sandboxId: sandboxOfA, status: { state: 'STATE_RUNNING', runnerId: 'runner-a' } });
  });

  it('concurrent requests that miss the token cache share one database lookup, for known and unknown tokens alike', async () => {
    const auth = new TokenAuthenticator(gw.db, 5_000);
    const fresh = (await infra.cp.issueToken('SANDBOX_USER', adminA)).token;
    const principals = await Promise.all(Array.from({ length: 50 }, () => auth.authenticate(`Bearer ${fresh}`)));
    expect(new Set(principals.map((p) => p.organizationId))).toEqual(new Set([orgA]));
    expect(auth.lookups).toBe(1);

    const unknown = `pdk_${randomUUID().replace(/-/g, '')}`;
    const refusals = await Promise.allSettled(Array.from({ length: 20 }, () => auth.authenticate(`Bearer ${unknown}`)));
    expect(refusals.every((r) => r.status === 'rejected' && (r.reason as { code?: string }).code === 'unauthenticated')).toBe(true);
    expect(auth.lookups).toBe(2);
    // Cached now: no further lookup for either.
    await auth.authenticate(`Bearer ${fresh}`);
    await expect(auth.authenticate(`Bearer ${unknown}`)).rejects.toMatchObject({ code: 'unauthenticated' });
    expect(auth.lookups).toBe(2);
  });

  it('a cached token outlives its revocation by at most the cache time, counted from the lookup, never extended by hits', async () => {
    let now = 1_000_000;
    const auth = new TokenAuthenticator(gw.db, 1_000, () => now);
    const t = await infra.cp.issueToken('SANDBOX_USER', adminA);
    await auth.authenticate(`Bearer ${t.token}`);
    await infra.cp.revokeToken(t.id, adminA);
    // Within the cache time the revocation is not seen yet (the documented bound), and hits do not push it back.
    now += 600;
    await expect(auth.authenticate(`Bearer ${t.token}`)).resolves.toMatchObject({ organizationId: orgA });
    now += 399;
    await expect(auth.authenticate(`Bearer ${t.token}`)).resolves.toMatchObject({ organizationId: orgA });
    expect(auth.lookups).toBe(1);
    // One cache time after the lookup, the token is asked about again, and refused.
    now += 1;
    await expect(auth.authenticate(`Bearer ${t.token}`)).rejects.toMatchObject({ code: 'unauthenticated' });
    expect(auth.lookups).toBe(2);
  });

  it('the token cache is bounded and evicts the least recently used: a flood of unknown tokens does not push out one in use', async () => {
    const auth = new TokenAuthenticator(gw.db, 60_000, Date.now, 3);
    const inUse = `Bearer ${(await infra.cp.issueToken('SANDBOX_USER', adminA)).token}`;
    const unknown = (i: number): string => `Bearer pdk_${randomUUID().replace(/-/g, '')}${i}`;
    await auth.authenticate(inUse);
    for (let i = 0; i < 10; i++) {
      await expect(auth.authenticate(unknown(i))).rejects.toMatchObject({ code: 'unauthenticated' });
      await auth.authenticate(inUse);
      expect(auth.cached).toBeLessThanOrEqual(3);
    }
    // One lookup for the token in use, one per unknown token: every use of it after the first was a hit.
    expect(auth.lookups).toBe(11);
  });

  it('stops accepting a token as soon as it is revoked (revocation delay configured to 0)', async () => {
    const t = await infra.cp.issueToken('SANDBOX_USER', adminA);
    expect((await http(gw.url, 'GET', '/v1/sandboxes', t.token)).status).toBe(200);
    await infra.cp.revokeToken(t.id, adminA);
    expect((await http(gw.url, 'GET', '/v1/sandboxes', t.token)).status).toBe(401);
  });

  it('serves health, readiness, metrics and the OpenAPI document without a token', async () => {
    expect((await http(gw.url, 'GET', '/healthz')).status).toBe(200);
    const ready = await http(gw.url, 'GET', '/readyz');
    expect(ready.json).toEqual({ ok: true, checks: { database: 'ok', nats: 'ok' } });
    const metrics = await http(gw.url, 'GET', '/metrics');
    expect(metrics.text).toContain('paddock_gateway_http_request_duration_seconds');
    const doc = await http(gw.url, 'GET', '/openapi.json');
    const paths = Object.keys((doc.json as { paths: Record<string, unknown> }).paths);
    expect(paths).toEqual(expect.arrayContaining(['/v1/sandboxes', '/v1/sandboxes:explain', '/v1/sandboxes/{idVerb}', '/v1/sandboxes/{id}/logs']));
  });

  it('routes colon methods: :explain with no runner connected explains an empty candidate set; unknown verbs are not_found', async () => {
    const ex = await http(gw.url, 'POST', '/v1/sandboxes:explain', tokenA, { spec: {} });
    expect(ex.status).toBe(200);
    expect(ex.json).toEqual({ candidates: [], verdicts: [], order: [], wouldPlaceOn: null });
    const create = await http(gw.url, 'POST', '/v1/sandboxes', tokenA, { spec: {} });
    expect(create.status).toBe(503);
    expect(create.json).toMatchObject({ code: 'unavailable', details: [{ reason: 'CWSANDBOX_RUNNER_UNAVAILABLE' }] });
    const verb = await http(gw.url, 'POST', `/v1/sandboxes/${sandboxOfA}:frobnicate`, tokenA, {});
    expect(verb.status).toBe(404);
    const invalid = await http(gw.url, 'POST', '/v1/sandboxes', tokenA, { spec: { containers: 'nope' } });
    expect(invalid.status).toBe(400);
    expect(invalid.json).toMatchObject({ code: 'invalid_argument', details: [{ reason: 'CWSANDBOX_INVALID_REQUEST' }, { fieldViolations: [{ field: 'spec.containers' }] }] });
  });

  it('request bodies: malformed JSON and prototype keys are invalid_argument naming the body or the key', async () => {
    const send = async (raw: string): Promise<{ status: number; json: { code?: string; message?: string; details?: { fieldViolations?: { field: string }[] }[] } }> => {
      const res = await fetch(`${gw.url}/v1/sandboxes`, { method: 'POST', headers: { authorization: `Bearer ${tokenA}`, 'content-type': 'application/json' }, body: raw });
      return { status: res.status, json: (await res.json()) as { code?: string; message?: string } };
    };
    const fieldsOf = (j: { details?: { fieldViolations?: { field: string }[] }[] }): string[] => (j.details ?? []).flatMap((d) => (d.fieldViolations ?? []).map((v) => v.field));
    const bad = await send('{"spec": ');
    expect(bad.status).toBe(400);
    expect(bad.json.code).toBe('invalid_argument');
    expect(bad.json.message).toMatch(/^request body is not valid JSON/);
    expect(fieldsOf(bad.json)).toEqual(['(body)']);
    for (const [raw, field] of [
      ['{"spec":{"__proto__":{"isAdmin":true}}}', '__proto__'],
      ['{"spec":{"constructor":{"prototype":{"x":1}}}}', 'constructor.prototype'],
    ] as const) {
      const r = await send(raw);
      expect(r.status).toBe(400);
      expect(r.json.code).toBe('invalid_argument');
      expect(r.json.message).toContain(field);
      expect(fieldsOf(r.json)).toEqual([field]);
    }
    // Nothing was polluted along the way.
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
  });
});

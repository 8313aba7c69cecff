import type { OpenAPIObject } from '@nestjs/swagger';
import { api, startTestApp, type TestApp } from '../support/app';
import type { ErrorBody } from '../support/errors';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('error rendering', () => {
  it('unknown routes are not_found in the Connect shape, with a request id', async () => {
    const r = await api(t, 'GET', '/v1/nope', { token: t.adminToken });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ code: 'not_found', message: 'no such route: GET /v1/nope', details: [] });
    expect(r.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('malformed JSON is invalid_argument naming the problem', async () => {
    const r = await api<ErrorBody>(t, 'POST', '/v1/clusters', { token: t.adminToken, rawBody: '{"name": "a",' });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_argument');
    expect(r.body.message).toMatch(/^request body is not valid JSON/);
  });

  it('a prototype key is refused by name, not as a syntax error (fuzz counterexample {"__proto__":null})', async () => {
    for (const [rawBody, field] of [
      ['{"display_name":{"__proto__":null}}', '__proto__'],
      ['{"policy":{"constructor":{"prototype":{"x":1}}}}', 'constructor.prototype'],
    ] as const) {
      const r = await api<ErrorBody>(t, 'PATCH', '/v1/sandbox/managedRunners/nobody', { token: t.adminToken, rawBody });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('invalid_argument');
      expect(r.body.message).toContain(field);
      expect(JSON.stringify(r.body.details)).toContain(`"field":"${field}"`);
    }
  });

  it('an empty JSON body is no body: the route answers, not the parser', async () => {
    const r = await api<ErrorBody>(t, 'POST', '/v1/clusters', { token: t.adminToken, rawBody: '' });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_argument');
    expect(r.body.message).not.toMatch(/JSON/);
  });

  it('a body over 1 MiB is invalid_argument naming the limit', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10), zone: 'us-east-1' });
    const r = await api<ErrorBody>(t, 'POST', '/v1/clusters', { token: t.adminToken, rawBody: big });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_argument');
    expect(r.body.message).toContain('1 MiB');
  });

  it('an unsupported content type is invalid_argument', async () => {
    const r = await api<ErrorBody>(t, 'POST', '/v1/clusters', { token: t.adminToken, rawBody: 'name=a', headers: { 'content-type': 'text/plain' } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_argument');
  });

  it('keeps a well-formed client x-request-id and replaces a malformed one', async () => {
    const kept = await api(t, 'GET', '/healthz', { headers: { 'x-request-id': 'trace-abc.123' } });
    expect(kept.headers.get('x-request-id')).toBe('trace-abc.123');
    const replaced = await api(t, 'GET', '/healthz', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('health, readiness, metrics, OpenAPI', () => {
  it('/healthz and /readyz are public; readyz checks the database and NATS', async () => {
    expect((await api(t, 'GET', '/healthz')).body).toEqual({ status: 'ok' });
    const ready = await api(t, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ok', checks: { database: 'ok', nats: 'ok' } });
  });

  it('/metrics exposes default metrics unprefixed and HTTP metrics by route template', async () => {
    await api(t, 'GET', '/v1/clusters/some-cluster', { token: t.adminToken });
    const r = await api(t, 'GET', '/metrics');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('text/plain');
    expect(r.text).toMatch(/^process_cpu_seconds_total /m);
    expect(r.text).toMatch(/^paddock_cp_http_requests_total\{method="GET",route="\/v1\/clusters\/:cluster",status="404"\} 1$/m);
    expect(r.text).toContain('paddock_cp_http_request_duration_seconds_bucket{le="0.005",method="GET",route="/v1/clusters/:cluster"}');
    expect(r.text).not.toContain('some-cluster');
  });

  it('/openapi.json documents the v1 routes with method-name operation ids and bearer auth', async () => {
    const r = await api<OpenAPIObject>(t, 'GET', '/openapi.json');
    expect(r.status).toBe(200);
    expect(r.body.openapi).toMatch(/^3\./);
    expect(r.body).toMatchObject({
      paths: {
        '/v1/clusters': {
          post: {
            operationId: 'registerCluster',
            requestBody: { content: { 'application/json': { schema: { type: 'object', required: ['name', 'zone'] } } } },
          },
        },
        '/v1/tokens': { post: { operationId: 'createToken' } },
        '/v1/auth/whoami': { get: { operationId: 'whoami' } },
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    });
    expect(r.body.paths['/healthz']).toBeUndefined();
  });
});

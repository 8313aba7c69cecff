import { ApiError, ControlPlaneClient } from '../../src/api/client';
import { apiErrorDiagnostics } from '../../src/api/diagnostics';
import { freePort } from '@paddock/testing';
import { createLogger } from '../../src/log';
import { RESOURCE_ATTRIBUTES } from '../../src/runner/schema';

describe('API errors as diagnostics', () => {
  it('field violations of a refused request land on the attributes they name', () => {
    const e = new ApiError('http', 'invalid', {
      status: 400,
      code: 'invalid_argument',
      violations: [
        { field: 'runner.identity.zone', rule: 'lowercase', description: 'runner.identity.zone must be lowercase (zone must be lowercase)' },
        { field: 'policy.constraints.resources.maxCpu', rule: 'invalid_quantity', description: 'policy.constraints.resources.maxCpu: invalid Kubernetes quantity "x"' },
        { field: 'runner.spec.maintenance_policy.windows[0].cron', rule: 'cron_5_field_utc', description: 'bad cron' },
      ],
      requestId: 'req-9',
    });
    const diags = apiErrorDiagnostics(e, 'creating managed runner "prod"', 'http://cp/', RESOURCE_ATTRIBUTES);
    expect(diags.map((d) => d.path)).toEqual([['zone'], ['policy', 'constraints', 'resources', 'max_cpu'], ['spec', 'maintenance_policy', 'windows', 0, 'cron']]);
    expect(diags[0]?.detail).toBe('creating managed runner "prod": runner.identity.zone must be lowercase (zone must be lowercase) (request id req-9). Nothing was changed.');
  });

  it('an unreachable API names the endpoint and where it is set; a refused token names COREWEAVE_API_TOKEN', () => {
    const [unreachable] = apiErrorDiagnostics(new ApiError('unreachable', 'GET /x: ECONNREFUSED'), 'reading', 'http://127.0.0.1:9/', RESOURCE_ATTRIBUTES);
    expect(unreachable?.detail).toContain('the API at http://127.0.0.1:9/ did not answer (GET /x: ECONNREFUSED)');
    expect(unreachable?.detail).toContain('COREWEAVE_API_ENDPOINT');
    const [refused] = apiErrorDiagnostics(new ApiError('http', 'missing or invalid token', { status: 401, code: 'unauthenticated' }), 'reading', 'x', RESOURCE_ATTRIBUTES);
    expect(refused?.summary).toBe('The CoreWeave API refused the token');
  });

  it('the client retries a connection that was refused, then reports the endpoint unreachable', async () => {
    const port = await freePort();
    const warnings: string[] = [];
    const client = new ControlPlaneClient({
      settings: { token: 't0ken-value', endpoint: new URL(`http://127.0.0.1:${port}/`), timeoutMs: 2000 },
      log: createLogger((l) => warnings.push(l)),
      userAgent: 'test',
      retryDelaysMs: [1, 1],
    });
    const e = await client.getRunner('prod').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect(e).toMatchObject({ kind: 'unreachable', message: 'GET /v1/sandbox/managedRunners/prod: ECONNREFUSED' });
    expect(warnings).toHaveLength(3);
  });
});

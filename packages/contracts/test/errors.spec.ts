import { PaddockError, httpStatusOf, ApiErrorBodySchema } from '../src';

describe('error model', () => {
  it('maps connect codes to HTTP statuses', () => {
    expect(httpStatusOf('failed_precondition')).toBe(400);
    expect(httpStatusOf('not_found')).toBe(404);
    expect(httpStatusOf('already_exists')).toBe(409);
    expect(httpStatusOf('unauthenticated')).toBe(401);
  });

  it('round-trips reason and field violations through the wire body', () => {
    const e = new PaddockError('invalid_argument', 'bad policy', {
      reason: 'PADDOCK_VALIDATION_FAILED',
      violations: [{ field: 'constraints.resources.maxCpu', rule: 'quantity', description: 'not a quantity' }],
    });
    const body = ApiErrorBodySchema.parse(JSON.parse(JSON.stringify(e.toBody())));
    const back = PaddockError.fromBody(body);
    expect(back.code).toBe('invalid_argument');
    expect(back.reason).toBe('PADDOCK_VALIDATION_FAILED');
    expect(back.violations[0]?.field).toBe('constraints.resources.maxCpu');
  });
});

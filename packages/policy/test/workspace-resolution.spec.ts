import { httpStatusOf } from '@paddock/contracts';

describe('workspace source resolution', () => {
  it('imports @paddock/contracts from its sources without a build', () => {
    expect(httpStatusOf('not_found')).toBe(404);
  });
});

import { describe, expect, it } from 'vitest';
import { httpEndpointsOf } from '../src/services';

describe('httpEndpointsOf', () => {
  it('finds none where a spec declares no service', () => {
    expect(httpEndpointsOf(undefined)).toEqual([]);
    expect(httpEndpointsOf(null)).toEqual([]);
    expect(httpEndpointsOf([])).toEqual([]);
  });

  it('serves public HTTP services only, with their defaults filled in', () => {
    expect(
      httpEndpointsOf([
        { port: 8080, name: 'web', visibility: 'VISIBILITY_PUBLIC' },
        { port: 9090, visibility: 'VISIBILITY_PUBLIC', endpoint: { auth: 'ENDPOINT_AUTH_TOKEN', requestTimeoutSeconds: 30 } },
        { port: 5432 },
      ]),
    ).toEqual([
      { port: 8080, name: 'web', auth: 'ENDPOINT_AUTH_OPEN', requestTimeoutSeconds: 15 },
      { port: 9090, auth: 'ENDPOINT_AUTH_TOKEN', requestTimeoutSeconds: 30 },
    ]);
  });

  it('skips a malformed list whole', () => {
    expect(httpEndpointsOf([{ port: 0, visibility: 'VISIBILITY_PUBLIC' }])).toEqual([]);
    expect(httpEndpointsOf('8080')).toEqual([]);
  });
});

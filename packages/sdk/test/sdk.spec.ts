import {
  AsyncChannel,
  NoSuitableRunnerError,
  PaddockClient,
  PaddockError,
  RunnerUnavailableError,
  Sandbox,
  SandboxNotFoundError,
  ValidationError,
  AuthenticationError,
  backoffDelay,
  errorFromBody,
} from '../src';

describe('errorFromBody', () => {
  it('maps reason codes to typed errors and keeps the field violations', () => {
    const e = errorFromBody(
      {
        code: 'failed_precondition',
        message: 'no runner admits',
        details: [
          { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'CWSANDBOX_NO_SUITABLE_RUNNER' },
          { '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'containers[0].resources.cpu', rule: 'max', description: 'r1: above 1', constraint: 'r1' }] },
        ],
      },
      400,
    );
    expect(e).toBeInstanceOf(NoSuitableRunnerError);
    expect(e).toMatchObject({ code: 'failed_precondition', reason: 'CWSANDBOX_NO_SUITABLE_RUNNER', httpStatus: 400, retryable: false });
    expect(e.violations[0]?.constraint).toBe('r1');
  });

  it('falls back to the Connect code, and marks unavailable/resource_exhausted/deadline_exceeded retryable', () => {
    expect(errorFromBody({ code: 'unauthenticated', message: 'x' })).toBeInstanceOf(AuthenticationError);
    expect(errorFromBody({ code: 'not_found', message: 'x' })).toBeInstanceOf(SandboxNotFoundError);
    const u = errorFromBody({ code: 'unavailable', message: 'x', details: [{ reason: 'CWSANDBOX_RUNNER_UNAVAILABLE' }] });
    expect(u).toBeInstanceOf(RunnerUnavailableError);
    expect(u.retryable).toBe(true);
    expect(errorFromBody({ code: 'resource_exhausted', message: 'x' }).retryable).toBe(true);
    expect(errorFromBody({ code: 'internal', message: 'x' })).toBeInstanceOf(PaddockError);
    expect(errorFromBody({ code: 'internal', message: 'x' }).retryable).toBe(false);
  });
});

describe('backoffDelay', () => {
  it('doubles from the initial delay, is capped, and jitters within [d/2, d]', () => {
    expect(backoffDelay(0, 100, 2000, () => 1)).toBe(100);
    expect(backoffDelay(0, 100, 2000, () => 0)).toBe(50);
    expect(backoffDelay(3, 100, 2000, () => 1)).toBe(800);
    expect(backoffDelay(10, 100, 2000, () => 1)).toBe(2000);
  });
});

describe('AsyncChannel', () => {
  it('delivers pushed items in order to a waiting consumer, then ends', async () => {
    const ch = new AsyncChannel<number>();
    const got: number[] = [];
    const consumer = (async () => {
      for await (const x of ch) got.push(x);
    })();
    ch.push(1);
    await Promise.resolve();
    ch.push(2);
    ch.push(3);
    ch.end();
    await consumer;
    expect(got).toEqual([1, 2, 3]);
  });

  it('rejects the consumer when ended with an error', async () => {
    const ch = new AsyncChannel<number>();
    ch.end(new Error('boom'));
    await expect((async () => {
      for await (const _ of ch) void _;
    })()).rejects.toThrow('boom');
  });
});

describe('PaddockClient configuration', () => {
  it('reads PADDOCK_GATEWAY_URL and PADDOCK_API_KEY, options win', () => {
    const prev = { url: process.env.PADDOCK_GATEWAY_URL, key: process.env.PADDOCK_API_KEY };
    process.env.PADDOCK_GATEWAY_URL = 'http://gw.example:9000/';
    process.env.PADDOCK_API_KEY = 'pdk_env';
    try {
      const c = new PaddockClient();
      expect(c.baseUrl).toBe('http://gw.example:9000');
      expect(c.headers()).toEqual({ authorization: 'Bearer pdk_env' });
      expect(new PaddockClient({ apiKey: 'pdk_opt' }).headers()).toEqual({ authorization: 'Bearer pdk_opt' });
      expect(c.url('/v1/sandboxes', { tags: ['a', 'b'], pageSize: 2, state: undefined })).toBe('http://gw.example:9000/v1/sandboxes?tags=a&tags=b&pageSize=2');
    } finally {
      if (prev.url === undefined) delete process.env.PADDOCK_GATEWAY_URL;
      else process.env.PADDOCK_GATEWAY_URL = prev.url;
      if (prev.key === undefined) delete process.env.PADDOCK_API_KEY;
      else process.env.PADDOCK_API_KEY = prev.key;
    }
  });

  it('defaults to http://127.0.0.1:8081', () => {
    const prev = process.env.PADDOCK_GATEWAY_URL;
    delete process.env.PADDOCK_GATEWAY_URL;
    try {
      expect(new PaddockClient().baseUrl).toBe('http://127.0.0.1:8081');
    } finally {
      if (prev !== undefined) process.env.PADDOCK_GATEWAY_URL = prev;
    }
  });

  it('fails fast on an unreachable gateway for a non-idempotent call, and wraps the network error as unavailable', async () => {
    const c = new PaddockClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'pdk_x', maxRetries: 0 });
    await expect(c.json('POST', '/v1/sandboxes/x:exec', { body: {}, idempotent: false })).rejects.toMatchObject({ code: 'unavailable' });
  });
});

describe('Sandbox.exec argument checks (before any network call)', () => {
  it('refuses an empty command and a relative cwd', () => {
    const sb = Object.create(Sandbox.prototype) as Sandbox;
    expect(() => sb.exec([])).toThrow(ValidationError);
    expect(() => sb.exec([])).toThrow('Command cannot be empty');
    expect(() => sb.exec(['ls'], { cwd: 'relative' })).toThrow('cwd must be an absolute path');
  });
});

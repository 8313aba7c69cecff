import { createRequire } from 'node:module';
import type { NatsConnection } from '@nats-io/transport-node';
import { startNats, type ThrowawayNats } from '@paddock/testing';

/**
 * The gateway's every call to a runner is a NATS request/reply. @nats-io/nats-core 3.3.1 built a
 * RequestError (and captured its stack) on every reply, for a reject of a request already settled:
 * about 0.1 ms of the gateway's CPU per call in a burst. patches/@nats-io__nats-core@3.3.1.patch
 * removes that; this holds the patch in place (an upgrade or a regenerated lockfile that drops it
 * fails here).
 */
describe('NATS request/reply: no error object is built for a reply', () => {
  let nats: ThrowawayNats;
  let nc: NatsConnection;
  // The module request.js reads `RequestError` from at each call: the one the client itself loaded.
  const fromTransport = createRequire(createRequire(__filename).resolve('@nats-io/transport-node'));
  const errors = createRequire(fromTransport.resolve('@nats-io/nats-core'))('./errors') as { RequestError: new (message: string) => Error };
  let built = 0;
  const original = errors.RequestError;

  beforeAll(async () => {
    nats = await startNats({ auth: false });
    nc = await nats.connectHarness({ noAsyncTraces: true });
    nc.subscribe('echo', { callback: (_e, m) => void m.respond(m.data) });
    errors.RequestError = class extends original {
      constructor(message: string) {
        super(message);
        built++;
      }
    };
  });
  afterAll(async () => {
    errors.RequestError = original;
    await nc.drain();
    await nats.stop();
  });

  it('answers 100 requests and builds no RequestError, and a request nobody answers still fails', async () => {
    for (let i = 0; i < 100; i++) expect(new TextDecoder().decode((await nc.request('echo', `m${i}`, { timeout: 2000 })).data)).toBe(`m${i}`);
    expect(built).toBe(0);
    await expect(nc.request('nobody.listens', 'x', { timeout: 500 })).rejects.toThrow();
  });
});

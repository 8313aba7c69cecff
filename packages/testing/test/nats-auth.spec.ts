import { chmodSync, readFileSync } from 'node:fs';
import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { subjects } from '@paddock/contracts';
import { connectNats, credsInfo, writeSecretFile } from '@paddock/nats';
import { startNats, waitFor, type ThrowawayNats } from '../src';

/**
 * The bus as nats-server enforces it: every refusal below comes from the server (permissions of
 * the role's scoped signing key, accounts per installation), not from Paddock code.
 */
function permissionErrors(nc: NatsConnection): string[] {
  const seen: string[] = [];
  void (async () => {
    for await (const s of nc.status()) if (s.type === 'error') seen.push(s.error.message);
  })();
  return seen;
}

/** The error a subscription was closed with (the server refused it), or 'open'. */
async function closedWith(sub: Subscription): Promise<string> {
  const e = await sub.closed;
  return e instanceof Error ? e.message : 'closed without error';
}

function collect(sub: Subscription): string[] {
  const got: string[] = [];
  void (async () => {
    for await (const m of sub) got.push(`${m.subject} ${m.string()}`);
  })();
  return got;
}

describe('NATS with authentication (real nats-server)', () => {
  let nats: ThrowawayNats;
  const open: NatsConnection[] = [];
  const track = (nc: NatsConnection): NatsConnection => {
    open.push(nc);
    return nc;
  };

  beforeAll(async () => {
    nats = await startNats({ jetstream: false, installations: 2 });
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((nc) => nc.close().catch(() => undefined)));
  });
  afterAll(async () => {
    await nats?.stop();
  });

  it('refuses an anonymous connection', async () => {
    await expect(connect({ servers: nats.url, maxReconnectAttempts: 0, reconnect: false })).rejects.toThrow(/Authorization Violation/);
  });

  it('refuses runner A publishing runner B’s heartbeat or sandbox state, and delivers its own', async () => {
    const watcher = track(await nats.connectHarness());
    const seen = collect(watcher.subscribe('evt.runner.v1.>'));
    await watcher.flush();
    const a = track(await nats.connectAs('runner', 'runner-a'));
    const errors = permissionErrors(a);
    a.publish(subjects.runnerHeartbeat('runner-b'), 'forged');
    a.publish(subjects.sandboxState('runner-b'), 'forged');
    a.publish(subjects.runnerHeartbeat('runner-a'), 'mine');
    await a.flush();
    await waitFor(() => seen.length === 1 && errors.length === 2, { timeoutMs: 5_000, what: 'own heartbeat delivered, two refusals' });
    expect(seen).toEqual([`${subjects.runnerHeartbeat('runner-a')} mine`]);
    expect(errors).toEqual([
      `Permissions Violation for Publish to "${subjects.runnerHeartbeat('runner-b')}"`,
      `Permissions Violation for Publish to "${subjects.sandboxState('runner-b')}"`,
    ]);
  });

  it('refuses runner A subscribing to runner B’s RPC subjects or stream input', async () => {
    const a = track(await nats.connectAs('runner', 'runner-a'));
    const rpc = a.subscribe(subjects.runnerRpcAll('runner-b'));
    const streams = a.subscribe(subjects.allStreamsToRunner('runner-b'));
    await a.flush();
    expect(await closedWith(rpc)).toMatch(/Permissions Violation for Subscription to "rpc.runner.v1.runner-b.sandbox.\*"/);
    expect(await closedWith(streams)).toMatch(/Permissions Violation for Subscription/);
    const own = a.subscribe(subjects.runnerRpcAll('runner-a'));
    await a.flush();
    expect(own.isClosed()).toBe(false);
  });

  it('a runner answers the requests it is sent, once, and cannot read or forge anyone else’s replies', async () => {
    const a = track(await nats.connectAs('runner', 'runner-a'));
    const errors = permissionErrors(a);
    let answers = 0;
    const served = a.subscribe(subjects.runnerRpc('runner-a', 'get'), {
      callback: (_e, m) => {
        answers++;
        m.respond('first');
        m.respond('second'); // one reply per request: the server refuses the second
      },
    });
    await a.flush();
    const gw = track(await nats.connectAs('gateway', 'gateway'));
    expect((await gw.request(subjects.runnerRpc('runner-a', 'get'), 'q', { timeout: 5_000 })).string()).toBe('first');
    const inbox = a.subscribe('_INBOX.>');
    const gwInbox = a.subscribe(`${subjects.inboxPrefix('gateway', 'gateway')}.>`);
    await a.flush();
    expect(await closedWith(inbox)).toMatch(/Permissions Violation for Subscription to "_INBOX.>"/);
    expect(await closedWith(gwInbox)).toMatch(/Permissions Violation/);
    a.publish(`${subjects.inboxPrefix('gateway', 'gateway')}.forged.1`, 'forged');
    await a.flush();
    const publishes = (): string[] => errors.filter((e) => e.includes('for Publish'));
    await waitFor(() => publishes().length === 2, { timeoutMs: 5_000, what: 'second reply and forged reply refused' });
    expect(answers).toBe(1);
    expect(publishes()).toEqual([
      expect.stringMatching(/^Permissions Violation for Publish to "_INBOX\.gateway\.gateway\.\w+\.\w+"$/),
      `Permissions Violation for Publish to "${subjects.inboxPrefix('gateway', 'gateway')}.forged.1"`,
    ]);
    served.unsubscribe();
  });

  it('each requesting role gets replies under its own inbox prefix, which other roles cannot subscribe to', async () => {
    const gw = track(await nats.connectAs('gateway', 'gateway'));
    expect(gw.info).toBeDefined();
    const other = track(await nats.connectAs('controller', 'cluster-1'));
    const sub = other.subscribe(`${subjects.inboxPrefix('gateway', 'gateway')}.>`);
    await other.flush();
    expect(await closedWith(sub)).toMatch(/Permissions Violation/);
  });

  it('the gateway cannot speak for runners, the control plane cannot call them', async () => {
    const gw = track(await nats.connectAs('gateway', 'gateway'));
    const cp = track(await nats.connectAs('control-plane', 'control-plane'));
    const gwErrors = permissionErrors(gw);
    const cpErrors = permissionErrors(cp);
    gw.publish(subjects.runnerHeartbeat('runner-a'), 'forged');
    cp.publish(subjects.runnerRpc('runner-a', 'delete'), 'forged');
    await Promise.all([gw.flush(), cp.flush()]);
    await waitFor(() => gwErrors.length === 1 && cpErrors.length === 1, { timeoutMs: 5_000, what: 'both refused' });
    expect(gwErrors[0]).toMatch(/Publish to "evt.runner.v1.runner-a.heartbeat"/);
    expect(cpErrors[0]).toMatch(/Publish to "rpc.runner.v1.runner-a.sandbox.delete"/);
  });

  it('two installations on one server cannot see each other’s messages, even with the same runner id', async () => {
    const [one, two] = nats.installations;
    if (!one || !two) throw new Error('two installations expected');
    const watchTwo = track(await two.connectHarness());
    const seenByTwo = collect(watchTwo.subscribe('>'));
    await watchTwo.flush();
    const runnerOne = track(await one.connectAs('runner', 'local'));
    runnerOne.subscribe(subjects.runnerRpcAll('local'), { callback: (_e, m) => void m.respond('installation one') });
    runnerOne.publish(subjects.runnerHeartbeat('local'), 'one');
    await runnerOne.flush();
    const gwTwo = track(await two.connectAs('gateway', 'gateway'));
    // Installation two's only responder is its own watcher, which does not answer: no reply at all.
    await expect(gwTwo.request(subjects.runnerRpc('local', 'get'), 'q', { timeout: 1_000 })).rejects.toThrow(/timeout/);
    const gwOne = track(await one.connectAs('gateway', 'gateway'));
    expect((await gwOne.request(subjects.runnerRpc('local', 'get'), 'q', { timeout: 5_000 })).string()).toBe('installation one');
    await watchTwo.flush();
    // Two saw its own gateway's request and nothing of installation one.
    expect(seenByTwo).toEqual([`${subjects.runnerRpc('local', 'get')} q`]);
  });

  it('rotation: a connection re-reads its credentials file on reconnect, so an expiring user is replaced without restart', async () => {
    const file = await nats.credsFile('runner', 'runner-r', { ttlSeconds: 2 });
    const expiring = readFileSync(file, 'utf8');
    const expiresAt = credsInfo(expiring).expiresAt?.getTime() ?? Infinity;
    const nc = track(await connectNats({ servers: nats.url, credsFile: file, maxReconnectAttempts: -1, reconnectTimeWait: 100 }));
    const statuses: string[] = [];
    void (async () => {
      for await (const s of nc.status()) statuses.push(s.type);
    })();
    writeSecretFile(file, (await nats.issuer.issue('runner', 'runner-r', { ttlSeconds: 60 })).creds);
    const watcher = track(await nats.connectHarness());
    const seen = collect(watcher.subscribe(subjects.runnerHeartbeat('runner-r')));
    await watcher.flush();
    await waitFor(() => statuses.includes('reconnect'), { timeoutMs: 10_000, what: 'reconnect after the first JWT expired' });
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt);
    nc.publish(subjects.runnerHeartbeat('runner-r'), 'after rotation');
    await nc.flush();
    await waitFor(() => seen.length === 1, { timeoutMs: 5_000, what: 'heartbeat with the rotated credentials' });
    // An expired user does not get in.
    const stale = `${file}.expired`;
    writeSecretFile(stale, (await nats.issuer.issue('runner', 'runner-r', { ttlSeconds: 60, now: () => new Date(Date.now() - 3_600_000) })).creds);
    await expect(connectNats({ servers: nats.url, credsFile: stale, reconnect: false })).rejects.toThrow(/Authorization Violation|expired/i);
  });

  it('refuses a credentials file that other users can read, naming it', async () => {
    const file = await nats.credsFile('gateway', 'gateway');
    chmodSync(file, 0o644);
    await expect(connectNats({ servers: nats.url, credsFile: file })).rejects.toThrow(`${file} is accessible to other users (mode 644)`);
  });
});

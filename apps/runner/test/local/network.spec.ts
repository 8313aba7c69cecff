import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNats, startPostgres, waitFor, type ThrowawayNats, type ThrowawayPostgres } from '@paddock/testing';
import type { Server } from 'node:net';
import { CallActivity } from '../../src/backend/local/call-activity';
import { formatIpv4 } from '../../src/backend/local/net/cidr';
import { SandboxNetworks } from '../../src/backend/local/net/sandbox-networks';
import { destroyBackend, launchRunning, makeBackend, spec, waitForState, type TestBackend } from './helpers';
import { hostAddress, hostListener, networkLeftovers, probeFromHost, probeFromSandbox, TestHost, type Reach } from './net-fixtures';

/** The sandbox's default gateway (the host end of its link), read from /proc/net/route inside it. */
async function gatewayOf(t: TestBackend, id: string): Promise<string> {
  const r = await t.backend.exec(id, { argv: ['cat', '/proc/net/route'] });
  const row = r.stdout.toString().split('\n').find((l) => l.split(/\s+/)[1] === '00000000');
  if (!row) throw new Error(`${id} has no default route`);
  const le = Buffer.from(row.split(/\s+/)[2] as string, 'hex');
  return [...le].reverse().join('.');
}

async function interfacesOf(t: TestBackend, id: string): Promise<string[]> {
  const r = await t.backend.exec(id, { argv: ['cat', '/proc/net/dev'] });
  return r.stdout
    .toString()
    .split('\n')
    .slice(2)
    .map((l) => l.split(':')[0]?.trim() ?? '')
    .filter(Boolean)
    .sort();
}

async function resolveIn(t: TestBackend, id: string, name: string): Promise<string> {
  const r = await t.backend.exec(id, { argv: ['python3', '-c', 'import socket,sys\ntry: print(socket.gethostbyname(sys.argv[1]))\nexcept Exception as e: print("unresolved")', name], timeoutMs: 30_000 });
  return r.stdout.toString().trim();
}

function allClosed(targets: string[]): Record<string, Reach> {
  return Object.fromEntries(targets.map((x) => [x, 'closed']));
}

describe('local backend: every sandbox in its own network namespace', () => {
  let t: TestBackend;
  let listener: { port: number; server: Server };
  let pg: ThrowawayPostgres;
  let nats: ThrowawayNats;
  let linkLocal: TestHost;
  let granted: TestHost;
  let outside: TestHost;
  const host = hostAddress();

  beforeAll(async () => {
    // No warm links here, so that the counts below are the sandboxes' own (warm links have their own test).
    t = makeBackend({ warmLinks: 0 });
    [listener, pg, nats] = await Promise.all([hostListener(), startPostgres(), startNats()]);
    linkLocal = await new TestHost('169.254.77.1/24', ['169.254.77.2'], [8080]).start();
    granted = await new TestHost('10.77.0.1/24', ['10.77.0.2', '10.77.0.3'], [8080, 8081]).start();
    outside = await new TestHost('10.78.0.1/24', ['10.78.0.2'], [8080]).start();
    await Promise.all([launchRunning(t, spec('default-a', { network: 'host' })), launchRunning(t, spec('denied', { network: 'none' }))]);
  }, 120_000);

  afterAll(async () => {
    listener?.server.close();
    pg.stop();
    await Promise.all([nats.stop(), linkLocal.stop(), granted.stop(), outside.stop()]);
    const left = await destroyBackend(t);
    expect(left).toEqual({ leftoverProcesses: [], leftoverCgroups: [] });
    expect(networkLeftovers(t)).toEqual({ netns: [], veths: [], table: false });
  }, 60_000);

  it('declares CIDR egress rules and egress, and neither without nftables', () => {
    expect(t.backend.capabilities()).toMatchObject({ egressRuleKinds: ['cidr'], supportsEgress: true });
    const bare = makeBackend({ nftPath: '/nonexistent/nft' });
    expect(bare.backend.capabilities()).toMatchObject({ egressRuleKinds: [], supportsEgress: false });
  });

  it('an egress-denied sandbox has loopback only', async () => {
    expect(await interfacesOf(t, 'denied')).toEqual(['lo']);
    expect(await interfacesOf(t, 'default-a')).toEqual(['eth0', 'lo']);
    const targets = [`${host}:${listener.port}`, '10.77.0.2:8080'];
    expect(await probeFromSandbox(t, 'denied', targets)).toEqual(allClosed(targets));
  }, 60_000);

  it("a default sandbox reaches none of the host's listeners: Postgres, NATS, the test's own, on loopback, the host address and its gateway", async () => {
    const gateway = await gatewayOf(t, 'default-a');
    const hostSide = [`${host}:${listener.port}`, `${gateway}:${listener.port}`, `127.0.0.1:${pg.port}`, `127.0.0.1:${nats.port}`, `127.0.0.1:${listener.port}`];
    for (const x of hostSide) expect([x, await probeFromHost(x)]).toEqual([x, 'open']);
    const targets = [...hostSide, `${host}:${pg.port}`, `${host}:${nats.port}`, `localhost:${listener.port}`];
    expect(await probeFromSandbox(t, 'default-a', targets)).toEqual(allClosed(targets));
  }, 60_000);

  it('a default sandbox cannot reach a link-local (metadata-like) address, nor private ranges it was not granted', async () => {
    for (const x of ['169.254.77.2:8080', '10.77.0.2:8080', '10.78.0.2:8080']) expect(await probeFromHost(x)).toBe('open');
    const targets = ['169.254.77.2:8080', '10.77.0.2:8080', '10.78.0.2:8080'];
    expect(await probeFromSandbox(t, 'default-a', targets)).toEqual(allClosed(targets));
  }, 60_000);

  it('two sandboxes cannot reach each other', async () => {
    await launchRunning(t, spec('default-b', { network: 'host', command: ['python3', '-m', 'http.server', '8000', '--bind', '0.0.0.0'] }));
    const gw = await gatewayOf(t, 'default-b');
    const own = formatIpv4(gw.split('.').reduce((a, o) => a * 256 + Number(o), 0) + 1);
    // The server is up once it answers on its own loopback (python takes a moment to bind).
    await waitFor(async () => (await probeFromSandbox(t, 'default-b', ['127.0.0.1:8000']))['127.0.0.1:8000'] === 'open', { timeoutMs: 15_000, what: 'the http server in default-b' });
    const self = await probeFromSandbox(t, 'default-b', ['127.0.0.1:8000', `${own}:8000`]);
    expect(self).toEqual({ '127.0.0.1:8000': 'open', [`${own}:8000`]: 'open' });
    expect(await probeFromSandbox(t, 'default-a', [`${own}:8000`])).toEqual({ [`${own}:8000`]: 'closed' });
    await t.backend.reap('default-b', 'RUNNER_DELETED');
  }, 60_000);

  it('a CIDR grant reaches its block on its ports, minus its exceptions, and nothing else', async () => {
    await Promise.all([
      launchRunning(t, spec('grant-port', { egressCidrs: [{ cidr: '10.77.0.0/24', except: ['10.77.0.3/32'], ports: [{ protocol: 'TCP', port: 8080 }] }] })),
      launchRunning(t, spec('grant-range', { egressCidrs: [{ cidr: '10.77.0.0/24', except: [], ports: [{ protocol: 'TCP', port: 8079, endPort: 8081 }] }] })),
      launchRunning(t, spec('grant-udp', { egressCidrs: [{ cidr: '10.77.0.0/24', except: [], ports: [{ protocol: 'UDP', port: 8080 }] }] })),
      launchRunning(t, spec('grant-world', { egressCidrs: [{ cidr: '0.0.0.0/0', except: [], ports: [] }] })),
    ]);
    const gw = await gatewayOf(t, 'grant-port');
    const targets = ['10.77.0.2:8080', '10.77.0.2:8081', '10.77.0.3:8080', '10.78.0.2:8080', `${host}:${listener.port}`, `${gw}:${listener.port}`, '169.254.77.2:8080'];
    expect(await probeFromSandbox(t, 'grant-port', targets)).toEqual({ ...allClosed(targets), '10.77.0.2:8080': 'open' });
    expect(await probeFromSandbox(t, 'grant-range', targets)).toEqual({ ...allClosed(targets), '10.77.0.2:8080': 'open', '10.77.0.2:8081': 'open', '10.77.0.3:8080': 'open' });
    expect(await probeFromSandbox(t, 'grant-udp', targets)).toEqual(allClosed(targets));
    // 0.0.0.0/0 contains the private ranges without naming them: still closed, as the host is.
    expect(await probeFromSandbox(t, 'grant-world', targets)).toEqual(allClosed(targets));
    for (const id of ['grant-port', 'grant-range', 'grant-udp', 'grant-world']) await t.backend.reap(id, 'RUNNER_DELETED');
  }, 90_000);

  it('refuses, by field, a grant it cannot enforce (IPv6, link-local)', async () => {
    await t.backend.launch(spec('grant-v6', { egressCidrs: [{ cidr: '2001:db8::/32', except: [], ports: [] }] }));
    const v6 = await waitForState(t, 'grant-v6', ['STATE_FAILED']);
    expect(v6.reason).toBe('FAILED_TO_START');
    expect(v6.message).toContain('egress.rules[0].cidr.cidr "2001:db8::/32": the local backend routes IPv4 only');
    await t.backend.launch(spec('grant-meta', { egressCidrs: [{ cidr: '10.77.0.0/24', except: [], ports: [] }, { cidr: '169.254.169.254/32', except: [], ports: [] }] }));
    expect((await waitForState(t, 'grant-meta', ['STATE_FAILED'])).message).toContain('egress.rules[1].cidr.cidr "169.254.169.254/32" lies in a range no sandbox may reach');
    for (const id of ['grant-v6', 'grant-meta']) await t.backend.reap(id, 'RUNNER_DELETED');
  }, 30_000);

  it('the machine resolver answers a default sandbox exactly when it answers the host', async () => {
    const name = 'registry.npmjs.org';
    let onHost: string;
    try {
      onHost = execFileSync('getent', ['ahostsv4', name], { encoding: 'utf8', timeout: 20_000 }) ? 'resolved' : 'unresolved';
    } catch {
      onHost = 'unresolved';
    }
    const inSandbox = await resolveIn(t, 'default-a', name);
    expect(inSandbox === 'unresolved' ? 'unresolved' : 'resolved').toBe(onHost);
    expect(await resolveIn(t, 'denied', name)).toBe('unresolved');
  }, 60_000);

  it("removes a sandbox's namespace, veth and chain when it ends, and what a crash left at recovery", async () => {
    const net = t.backend.networks();
    await launchRunning(t, spec('short', { network: 'host', command: ['sleep', '0.2'] }));
    await waitForState(t, 'short', ['STATE_COMPLETED']);
    const baseline = async (): Promise<{ netns: number; veths: number; chains: string[] }> => {
      const left = networkLeftovers(t);
      return { netns: left.netns.length, veths: left.veths.length, chains: (await net.chains()).filter((c) => c.startsWith('sb')) };
    };
    // default-a is the only sandbox with a link now.
    const deadline = Date.now() + 5000;
    while ((await baseline()).netns !== 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await baseline()).toMatchObject({ netns: 1, veths: 1 });
    expect((await baseline()).chains).toHaveLength(1);
    // A crash in the middle of a setup: a link with its state file and no sandbox, and a veth of
    // this runner no state file names.
    await net.setup('ghost', { kind: 'unrestricted' });
    execFileSync('ip', ['link', 'add', `${net.names.vethPrefix}3fe`, 'type', 'veth', 'peer', 'name', `ptx${process.pid}`]);
    expect((await baseline()).veths).toBe(3);
    await t.backend.recover();
    expect(await baseline()).toMatchObject({ netns: 1, veths: 1 });
    expect((await baseline()).chains).toHaveLength(1);
    expect(await probeFromSandbox(t, 'default-a', [`${host}:${listener.port}`])).toEqual({ [`${host}:${listener.port}`]: 'closed' });
  }, 60_000);

  it('removes the table, veths and namespaces of a runner whose state directory is gone', async () => {
    const gone = makeBackend({ warmLinks: 0 });
    await gone.backend.networks().setup('orphan', { kind: 'unrestricted' });
    expect(networkLeftovers(gone)).toEqual({ netns: [expect.any(String)], veths: [expect.any(String)], table: true });
    rmSync(gone.stateDir, { recursive: true, force: true });
    // Any runner's first network setup collects it (this one's process never saw that runner).
    const next = makeBackend({ warmLinks: 0 });
    await next.backend.networks().setup('probe', { kind: 'unrestricted' });
    expect(networkLeftovers(gone)).toEqual({ netns: [], veths: [], table: false });
    await next.backend.networks().teardown('probe');
    await next.backend.close();
    expect(networkLeftovers(next)).toEqual({ netns: [], veths: [], table: false });
    rmSync(next.stateDir, { recursive: true, force: true });
  }, 30_000);
});

describe('local backend: warm egress links', () => {
  it('keeps links built ahead of demand, hands them to launches, and removes them on close', async () => {
    const t = makeBackend({ warmLinks: 2 });
    const listener = await hostListener();
    try {
      await launchRunning(t, spec('first', { network: 'host' }));
      // The first egress launch built its own link and started two more.
      await waitFor(() => networkLeftovers(t).netns.length === 3, { timeoutMs: 15_000, what: 'two warm links' });
      await launchRunning(t, spec('second', { network: 'host' }));
      const target = `${hostAddress()}:${listener.port}`;
      expect(await probeFromHost(target)).toBe('open');
      expect(await probeFromSandbox(t, 'second', [target])).toEqual({ [target]: 'closed' });
      expect(await interfacesOf(t, 'second')).toEqual(['eth0', 'lo']);
      await waitFor(() => networkLeftovers(t).netns.length === 4, { timeoutMs: 15_000, what: 'the pool refilled' });
      // recover() keeps the pool (this process's own) and both sandboxes.
      await t.backend.recover();
      expect(networkLeftovers(t).netns).toHaveLength(4);
    } finally {
      listener.server.close();
    }
    // A runner restart: the old process's pool goes with it; the new one adopts both sandboxes, links intact.
    await t.backend.close();
    expect(networkLeftovers(t).netns).toHaveLength(2);
    const restarted = makeBackend({ runnerId: t.runnerId, stateDir: t.stateDir, warmLinks: 2 });
    expect((await restarted.backend.recover()).map((r) => r.sandboxId).sort()).toEqual(['first', 'second']);
    expect(networkLeftovers(restarted).netns).toHaveLength(2);
    expect(await interfacesOf(restarted, 'second')).toEqual(['eth0', 'lo']);
    const left = await destroyBackend(restarted);
    expect(left).toEqual({ leftoverProcesses: [], leftoverCgroups: [] });
    expect(networkLeftovers(restarted).netns).toEqual([]);
    expect(networkLeftovers(restarted)).toEqual({ netns: [], veths: [], table: false });
  }, 60_000);
});

describe('local backend: warm egress links under a stream of launches', () => {
  it("starts a taken link's replacement as the launch takes it, unless exec or file calls are being served", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'paddock-link-pace-'));
    const activity = new CallActivity();
    const net = new SandboxNetworks({ runnerId: 'link-pace', stateDir, ipPath: '/usr/sbin/ip', nftPath: '/usr/sbin/nft', hostResolvConf: '/etc/resolv.conf', warmLinks: 1, activity });
    const prefix = net.names.vethPrefix;
    const namespaces = (): string[] => (existsSync('/run/netns') ? readdirSync('/run/netns').filter((n) => n.startsWith(prefix)) : []);
    // A pre-build's state file is written before its first `ip` run.
    const prebuilds = (): string[] => readdirSync(join(stateDir, 'net')).filter((f) => f.startsWith('_warm-'));
    const grant = { kind: 'unrestricted' } as const;
    try {
      await net.setup('a', grant);
      await waitFor(() => net.warmCount() === 1, { timeoutMs: 15_000, what: 'the first warm link' });
      // Back to back, no call in flight: the launch takes the warm link and its replacement is under way before the launch returns.
      await net.setup('b', grant);
      expect(net.launches).toEqual({ prebuilt: 1, inline: 1 });
      expect(prebuilds()).toHaveLength(1);
      await waitFor(() => net.warmCount() === 1, { timeoutMs: 15_000, what: 'the replacement' });
      expect(namespaces()).toHaveLength(3);
      // An exec being served holds the replacement back (until the calls pause).
      const end = activity.begin();
      await net.setup('c', grant);
      expect(net.launches).toEqual({ prebuilt: 2, inline: 1 });
      expect(prebuilds()).toEqual([]);
      end();
      await waitFor(() => net.warmCount() === 1, { timeoutMs: 15_000, what: 'the replacement once the call ended' });
      expect(namespaces()).toHaveLength(4);
      // Each launch got a link of its own.
      expect(new Set(['a', 'b', 'c'].map((id) => readFileSync(join(stateDir, 'net', `${id}.json`), 'utf8').replace(/.*"index":(\d+).*/s, '$1'))).size).toBe(3);
    } finally {
      await Promise.all(['a', 'b', 'c'].map((id) => net.teardown(id)));
      await net.dispose();
      rmSync(stateDir, { recursive: true, force: true });
    }
    expect(namespaces()).toEqual([]);
  }, 60_000);
});

describe('local backend: DNS through the sandbox link', () => {
  let t: TestBackend;
  let dns: TestHost;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'paddock-dns-'));
    writeFileSync(join(dir, 'resolv.conf'), 'nameserver 127.0.0.53\nnameserver 10.79.0.2\nsearch example.test\noptions timeout:1 attempts:1\n');
    t = makeBackend({ hostResolvConf: join(dir, 'resolv.conf') });
    dns = await new TestHost('10.79.0.1/24', ['10.79.0.2'], [80], '203.0.113.7').start();
  }, 60_000);

  afterAll(async () => {
    await dns?.stop();
    const left = await destroyBackend(t);
    expect(left).toEqual({ leftoverProcesses: [], leftoverCgroups: [] });
    expect(networkLeftovers(t)).toEqual({ netns: [], veths: [], table: false });
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('an egress sandbox resolves through the upstream resolver (and reaches nothing else of it); a denied one does not', async () => {
    await Promise.all([
      launchRunning(t, spec('dns-default', { network: 'host' })),
      launchRunning(t, spec('dns-denied', { network: 'none' })),
      launchRunning(t, spec('dns-granted', { egressCidrs: [{ cidr: '10.79.0.2/32', except: [], ports: [{ protocol: 'UDP', port: 53 }] }] })),
      launchRunning(t, spec('dns-other', { egressCidrs: [{ cidr: '10.77.0.0/24', except: [], ports: [] }] })),
    ]);
    const conf = await t.backend.exec('dns-default', { argv: ['cat', '/etc/resolv.conf'] });
    // The loopback resolver is the host itself: left out.
    expect(conf.stdout.toString()).toMatch(/^nameserver 10\.79\.0\.2\nsearch example\.test$/m);
    expect(conf.stdout.toString()).not.toContain('127.0.0.53');
    expect(await resolveIn(t, 'dns-default', 'anything.example.test')).toBe('203.0.113.7');
    expect(await probeFromSandbox(t, 'dns-default', ['10.79.0.2:80'])).toEqual({ '10.79.0.2:80': 'closed' });
    expect(await resolveIn(t, 'dns-denied', 'anything.example.test')).toBe('unresolved');
    // CIDR grants mean what a NetworkPolicy means: DNS only where the resolver is granted.
    expect(await resolveIn(t, 'dns-granted', 'anything.example.test')).toBe('203.0.113.7');
    expect(await resolveIn(t, 'dns-other', 'anything.example.test')).toBe('unresolved');
  }, 90_000);
});

import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { K8sTestServer } from '@paddock/k8s-testserver';
import { waitFor } from '@paddock/testing';
import * as k8s from '@kubernetes/client-node';
import { buildSandboxPod, KubernetesBackend, podNameFor } from '../../src/backend/kubernetes';
import type { BackendEvent } from '../../src/backend/sandbox-backend';
import { createRestrictedNamespace, launchSpec, runnerKubeConfig, startRunnerK8sServer } from './support';

const NS = 'paddock-sandboxes-runner-a';

describe('KubernetesBackend on the Kubernetes API test server', () => {
  let server: K8sTestServer;
  let backend: KubernetesBackend;
  const events: BackendEvent[] = [];
  const eventsOf = (id: string): BackendEvent[] => events.filter((e) => e.sandboxId === id);
  const terminalOf = (id: string): BackendEvent | undefined => eventsOf(id).find((e) => e.state === 'STATE_COMPLETED' || e.state === 'STATE_FAILED');

  beforeAll(async () => {
    server = await startRunnerK8sServer({ nodes: [{ name: 'node-1' }] });
    await createRestrictedNamespace(server.kubeConfig(), NS);
    backend = new KubernetesBackend({ runnerId: 'runner-a', namespace: NS, kubeConfig: runnerKubeConfig(server, NS), runtimeClasses: [] });
    backend.onEvent((e) => events.push(e));
  });
  afterAll(async () => {
    await backend.close();
    await server.close();
  });

  const running = async (sandboxId: string, command: string[] = []): Promise<void> => {
    await backend.launch(launchSpec({ sandboxId, command }));
    await waitFor(() => eventsOf(sandboxId).find((e) => e.state === 'STATE_RUNNING'), { what: `${sandboxId} RUNNING` });
  };

  it('launches a restricted pod with its NetworkPolicy, reports RUNNING and runs exec', async () => {
    await running('sb-exec');
    const pod = server.get('v1', 'Pod', podNameFor('sb-exec'), NS);
    expect(pod?.metadata?.labels).toMatchObject({ 'paddock.dev/sandbox-id': 'sb-exec', 'paddock.dev/organization-id': 'org-1', 'paddock.dev/runner-id': 'runner-a' });
    expect(server.list('networking.k8s.io/v1', 'NetworkPolicy', NS)).toHaveLength(1);
    expect(eventsOf('sb-exec').map((e) => e.state)).toEqual(['STATE_CREATING', 'STATE_RUNNING']);

    const r = await backend.exec('sb-exec', { argv: ['echo', 'hi'] });
    expect(r.exitCode).toBe(0);
    expect(r.stdout.toString()).toBe('hi\n');

    const failing = await backend.exec('sb-exec', { argv: ['sh', '-c', 'echo oops >&2; exit 7'] });
    expect(failing.exitCode).toBe(7);
    expect(failing.stderr.toString()).toBe('oops\n');

    const big = await backend.exec('sb-exec', { argv: ['sh', '-c', 'head -c 100000 /dev/zero'], maxOutputBytes: 1000 });
    expect(big.stdout.length).toBe(1000);
    expect(big.stdoutBytes).toBe(100000);
    expect(big.stdoutTruncated).toBe(true);

    const slow = await backend.exec('sb-exec', { argv: ['sleep', '30'], timeoutMs: 200 });
    expect(slow.timedOut).toBe(true);

    const withEnv = await backend.exec('sb-exec', { argv: ['sh', '-c', 'echo "$GREETING" && pwd'], env: { GREETING: 'hello' }, cwd: '/' });
    expect(withEnv.stdout.toString()).toBe('hello\n/\n');
  });

  it('enforces resolved CIDR egress grants in the sandbox NetworkPolicy (ipBlock, exceptions, ports)', async () => {
    await backend.launch(
      launchSpec({
        sandboxId: 'sb-cidr',
        egressCidrs: [
          { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'], ports: [{ protocol: 'TCP', port: 443 }] },
          { cidr: '2001:db8::/32', except: [], ports: [] },
        ],
      }),
    );
    const np = server.get('networking.k8s.io/v1', 'NetworkPolicy', podNameFor('sb-cidr'), NS) as { spec?: unknown } | undefined;
    expect(np?.spec).toMatchObject({
      policyTypes: ['Ingress', 'Egress'],
      ingress: [],
      egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } }], ports: [{ protocol: 'TCP', port: 443 }] }, { to: [{ ipBlock: { cidr: '2001:db8::/32' } }] }],
    });
  });

  it('refuses to launch under a runtime class or GPU model it does not offer, instead of running under a default', async () => {
    const offering = new KubernetesBackend({ runnerId: 'runner-a', namespace: NS, kubeConfig: runnerKubeConfig(server, NS), runtimeClasses: ['gvisor'] });
    try {
      await expect(offering.launch(launchSpec({ sandboxId: 'sb-kata', runtimeClassName: 'kata' }))).rejects.toThrow('runtime class kata is not offered by this runner (offers gvisor)');
      expect(server.get('v1', 'Pod', podNameFor('sb-kata'), NS)).toBeUndefined();
      // Likewise a GPU model it cannot select.
      await expect(offering.launch(launchSpec({ sandboxId: 'sb-h100', gpuCount: 1, gpuType: 'H100' }))).rejects.toThrow('GPU type H100 was asked for, but this runner does not select GPU models');
      expect(server.get('v1', 'Pod', podNameFor('sb-h100'), NS)).toBeUndefined();
    } finally {
      await offering.close();
    }
  });

  it('streams exec stdin to stdout byte-exact', async () => {
    await running('sb-stream');
    const proc = await backend.execStream('sb-stream', { argv: ['cat'] });
    const payload = randomBytes(512 * 1024);
    const chunks: Buffer[] = [];
    proc.stdout.on('data', (c: Buffer) => chunks.push(c));
    Readable.from([payload.subarray(0, 200_000), payload.subarray(200_000)]).pipe(proc.stdin);
    const exit = await proc.exited;
    await waitFor(() => proc.stdout.readableEnded || undefined);
    expect(exit.exitCode).toBe(0);
    expect(Buffer.concat(chunks).equals(payload)).toBe(true);
  });

  it('streams with a TTY (stderr merged, resize frames accepted) and kill ends the command', async () => {
    await running('sb-tty');
    const proc = await backend.execStream('sb-tty', { argv: ['sh', '-c', 'echo out; echo err >&2'], tty: true, cols: 80, rows: 24 });
    proc.resize(120, 40);
    proc.stdin.end();
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    proc.stdout.on('data', (c: Buffer) => out.push(c));
    proc.stderr.on('data', (c: Buffer) => err.push(c));
    expect(await proc.exited).toEqual({ exitCode: 0, signal: null });
    await waitFor(() => (proc.stdout.readableEnded && proc.stderr.readableEnded) || undefined);
    expect(Buffer.concat(out).toString().split('\n').sort()).toEqual(['', 'err', 'out']);
    expect(Buffer.concat(err)).toHaveLength(0);

    const sleeper = await backend.execStream('sb-tty', { argv: ['sleep', '30'] });
    sleeper.stdout.resume();
    sleeper.stderr.resume();
    sleeper.kill();
    expect(await sleeper.exited).toEqual({ exitCode: null, signal: 'SIGKILL' });
  });

  it('writes, reads, lists, stats and removes files byte-exact', async () => {
    await running('sb-files');
    const content = randomBytes(300_000);
    await backend.writeFile('sb-files', 'blob.bin', content, 0o640);
    const read: Buffer[] = [];
    for await (const c of await backend.readFile('sb-files', 'blob.bin')) read.push(c as Buffer);
    expect(Buffer.concat(read).equals(content)).toBe(true);
    const st = await backend.stat('sb-files', 'blob.bin');
    expect(st).toMatchObject({ type: 'file', size: 300_000, mode: 0o640 });
    const listing = await backend.listDir('sb-files', '.');
    expect(listing.map((f) => f.path)).toContain('blob.bin');
    await backend.remove('sb-files', 'blob.bin', false);
    await expect(backend.stat('sb-files', 'blob.bin')).rejects.toThrow(/stat/);
    await expect(backend.readFile('sb-files', 'missing.bin').then(async (s) => { for await (const _ of s) void _; })).rejects.toThrow(/cannot read missing.bin/);
  });

  it('writes the launch files before reporting RUNNING', async () => {
    const content = randomBytes(4096);
    await backend.launch(launchSpec({ sandboxId: 'sb-seed', files: [{ path: 'seed/dir/data.bin', content }] }));
    await waitFor(() => eventsOf('sb-seed').find((e) => e.state === 'STATE_RUNNING'), { what: 'sb-seed RUNNING' });
    const read: Buffer[] = [];
    for await (const c of await backend.readFile('sb-seed', 'seed/dir/data.bin')) read.push(c as Buffer);
    expect(Buffer.concat(read).equals(content)).toBe(true);
  });

  it('holds a main command back until its launch files are in place (the launch gate)', async () => {
    const content = 'written before the command ran\n';
    // Without the gate this `cat` starts as soon as the container does and finds no file.
    await backend.launch(
      launchSpec({ sandboxId: 'sb-gated', command: ['sh', '-c', 'cat seed/in.txt && ls -A'], files: [{ path: 'seed/in.txt', content: Buffer.from(content) }] }),
    );
    expect(await waitFor(() => terminalOf('sb-gated'), { what: 'sb-gated terminal' })).toMatchObject({ state: 'STATE_COMPLETED', reason: 'EXITED', exitCode: 0 });
    const out: string[] = [];
    for await (const chunk of backend.logs('sb-gated', {})) out.push(chunk.data.toString());
    // The file, then the working directory's listing: the gate's marker is gone before the command runs.
    expect(out.join('')).toBe(`${content}seed\n`);
    const pod = server.get('v1', 'Pod', podNameFor('sb-gated'), NS);
    expect(pod?.metadata?.annotations?.['paddock.dev/launch-files']).toBe('written');
    expect(eventsOf('sb-gated').map((e) => e.state)).toEqual(['STATE_CREATING', 'STATE_RUNNING', 'STATE_COMPLETED']);
  });

  it('reports RUNNING before the end of a gated command that finishes while its launch is still being marked written', async () => {
    // Forces the interleaving seen once under load: the gate opens, the command runs and its pod
    // succeeds, and the informer sees that end while the backend is still patching the
    // `launch-files: written` annotation, before it has reported RUNNING.
    type Internals = { markFilesWritten(id: string): Promise<void>; seenWhileSeeding: Map<string, unknown> };
    const internals = backend as unknown as Internals;
    const original = internals.markFilesWritten.bind(backend);
    internals.markFilesWritten = async (id: string): Promise<void> => {
      await original(id);
      await waitFor(() => internals.seenWhileSeeding.has(id) || terminalOf(id), { what: `the end of ${id} seen during its launch` });
    };
    try {
      await backend.launch(launchSpec({ sandboxId: 'sb-fast', command: ['sh', '-c', 'cat in.txt'], files: [{ path: 'in.txt', content: Buffer.from('x') }] }));
      await waitFor(() => terminalOf('sb-fast'), { what: 'sb-fast terminal' });
      expect(eventsOf('sb-fast').map((e) => e.state)).toEqual(['STATE_CREATING', 'STATE_RUNNING', 'STATE_COMPLETED']);
    } finally {
      internals.markFilesWritten = original;
    }
  });

  it('fails, at recovery, a launch whose runner died before writing its files, instead of serving it without them', async () => {
    // What a runner killed between creating the pod and seeding it leaves behind.
    const spec = launchSpec({ sandboxId: 'sb-orphan', command: ['sh', '-c', 'cat in.txt'], files: [{ path: 'in.txt', content: Buffer.from('x') }] });
    const core = server.kubeConfig().makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedPod({ namespace: NS, body: buildSandboxPod(spec, { namespace: NS }) });
    await waitFor(() => (server.get('v1', 'Pod', podNameFor('sb-orphan'), NS)?.status as { phase?: string } | undefined)?.phase === 'Running' || undefined, { what: 'orphan pod running' });

    const restarted = new KubernetesBackend({ runnerId: 'runner-a', namespace: NS, kubeConfig: runnerKubeConfig(server, NS) });
    const seen: BackendEvent[] = [];
    restarted.onEvent((e) => seen.push(e));
    try {
      const found = (await restarted.recover()).find((f) => f.sandboxId === 'sb-orphan');
      expect(found?.unrecoverable).toEqual({ reason: 'FAILED_TO_START', message: "the runner restarted before this sandbox's launch files were written; create it again" });
      // Its gated command never ran, and the restarted backend never called it running.
      expect(seen.filter((e) => e.sandboxId === 'sb-orphan' && e.state === 'STATE_RUNNING')).toEqual([]);
      await restarted.reap('sb-orphan', 'FAILED_TO_START');
      await waitFor(() => server.list('v1', 'Pod', NS).every((p) => p.metadata?.annotations?.['paddock.dev/sandbox-id'] !== 'sb-orphan') || undefined, { what: 'orphan pod deleted' });
      // A pod whose files were written is adopted as before.
      expect((await restarted.recover()).find((f) => f.sandboxId === 'sb-seed')).toMatchObject({ state: 'STATE_RUNNING' });
      expect((await restarted.recover()).find((f) => f.sandboxId === 'sb-seed')?.unrecoverable).toBeUndefined();
    } finally {
      await restarted.close();
    }
  });

  it('restarts its pod watch with backoff when the API server cuts it, degraded until it is back, and misses nothing', async () => {
    await running('sb-watch');
    // The API server drops every watch and refuses pod lists for a while (a restart, a cut proxy).
    const refuse = server.onRequest((req) => (req.resource === 'pods' && (req.verb === 'list' || req.verb === 'watch') ? { code: 503, reason: 'ServiceUnavailable', message: 'injected outage' } : undefined));
    server.dropWatches();
    await waitFor(() => backend.degraded(), { what: 'the backend to report its watch down' });
    expect(backend.degraded()).toMatch(/^the pod watch is down for \d+s \(\d+ failed attempts, retrying with backoff\)/);
    const listsDuringOutage = server.requestCount('list', 'pods');
    // A pod that ends while the watch is down is seen once it is back.
    const pod = server.get('v1', 'Pod', podNameFor('sb-watch'), NS);
    expect(pod).toBeDefined();
    await backend.stop('sb-watch', 0, 'STOPPED_BY_USER');
    refuse();
    await waitFor(() => backend.degraded() === undefined || undefined, { timeoutMs: 30_000, what: 'the watch back up' });
    await waitFor(() => terminalOf('sb-watch'), { what: 'sb-watch terminal after the outage' });
    // Backoff, not a tight loop: a handful of relists in the outage, not hundreds.
    expect(server.requestCount('list', 'pods') - listsDuringOutage).toBeLessThan(20);
  });

  it('follows logs and resumes from a byte offset', async () => {
    await running('sb-logs', ['sh', '-c', 'echo first; sleep 0.3; echo second; sleep 30']);
    const ac = new AbortController();
    const got: { offset: number; text: string }[] = [];
    for await (const chunk of backend.logs('sb-logs', { follow: true, signal: ac.signal })) {
      got.push({ offset: chunk.offset, text: chunk.data.toString() });
      if (got.map((g) => g.text).join('').includes('second')) ac.abort();
    }
    expect(got.map((g) => g.text).join('')).toBe('first\nsecond\n');
    expect(got[0]?.offset).toBe(0);
    const resumed: string[] = [];
    for await (const chunk of backend.logs('sb-logs', { fromOffset: 6 })) {
      expect(chunk.offset).toBe(6);
      resumed.push(chunk.data.toString());
    }
    expect(resumed.join('')).toBe('second\n');
    const tail: { offset: number; text: string }[] = [];
    for await (const chunk of backend.logs('sb-logs', { tailLines: 1 })) tail.push({ offset: chunk.offset, text: chunk.data.toString() });
    expect(tail).toEqual([{ offset: 6, text: 'second\n' }]);
  });

  it('stop deletes the pod and reports STOPPED_BY_USER', async () => {
    await running('sb-stop', ['sleep', '60']);
    await backend.stop('sb-stop', 1, 'STOPPED_BY_USER');
    const end = await waitFor(() => terminalOf('sb-stop'), { what: 'sb-stop terminal' });
    expect(end.reason).toBe('STOPPED_BY_USER');
    await waitFor(() => server.list('v1', 'Pod', NS).every((p) => p.metadata?.annotations?.['paddock.dev/sandbox-id'] !== 'sb-stop') || undefined);
  });

  it('reports a failed image pull as FAILED IMAGE_NOT_FOUND', async () => {
    await backend.launch(launchSpec({ sandboxId: 'sb-noimage', image: 'registry.example/doesnotexist:1' }));
    const end = await waitFor(() => terminalOf('sb-noimage'), { what: 'sb-noimage terminal' });
    expect(end).toMatchObject({ state: 'STATE_FAILED', reason: 'IMAGE_NOT_FOUND' });
  });

  it('reports activeDeadlineSeconds expiry as FAILED LIFETIME_EXPIRED', async () => {
    await backend.launch(launchSpec({ sandboxId: 'sb-deadline', command: ['sleep', '60'], lifetimeSeconds: 1 }));
    const end = await waitFor(() => terminalOf('sb-deadline'), { what: 'sb-deadline terminal', timeoutMs: 15_000 });
    expect(end).toMatchObject({ state: 'STATE_FAILED', reason: 'LIFETIME_EXPIRED' });
  });

  it('reports a main process exit as COMPLETED EXITED / FAILED EXITED with the exit code', async () => {
    await backend.launch(launchSpec({ sandboxId: 'sb-ok', command: ['true'] }));
    await backend.launch(launchSpec({ sandboxId: 'sb-bad', command: ['sh', '-c', 'exit 3'] }));
    expect(await waitFor(() => terminalOf('sb-ok'))).toMatchObject({ state: 'STATE_COMPLETED', reason: 'EXITED', exitCode: 0 });
    expect(await waitFor(() => terminalOf('sb-bad'))).toMatchObject({ state: 'STATE_FAILED', reason: 'EXITED', exitCode: 3 });
  });

  it('deletes the logs of an ended sandbox with its pod (DeleteSandboxLogs)', async () => {
    await backend.launch(launchSpec({ sandboxId: 'sb-logdel', command: ['sh', '-c', 'echo secret-token'] }));
    expect(await waitFor(() => terminalOf('sb-logdel'))).toMatchObject({ state: 'STATE_COMPLETED' });
    const out: string[] = [];
    for await (const chunk of backend.logs('sb-logdel', {})) out.push(chunk.data.toString());
    expect(out.join('')).toBe('secret-token\n');
    await backend.deleteLogs('sb-logdel');
    expect(server.get('v1', 'Pod', podNameFor('sb-logdel'), NS)).toBeUndefined();
    // No second terminal event: the sandbox had already ended.
    expect(eventsOf('sb-logdel').filter((e) => e.state === 'STATE_COMPLETED' || e.state === 'STATE_FAILED')).toHaveLength(1);
  });

  it('launch is idempotent and a new backend instance recovers the running pods', async () => {
    await running('sb-recover');
    await backend.launch(launchSpec({ sandboxId: 'sb-recover' }));
    expect(server.list('v1', 'Pod', NS).filter((p) => p.metadata?.annotations?.['paddock.dev/sandbox-id'] === 'sb-recover')).toHaveLength(1);

    const other = new KubernetesBackend({ runnerId: 'runner-b', namespace: NS, kubeConfig: runnerKubeConfig(server, NS) });
    const restarted = new KubernetesBackend({ runnerId: 'runner-a', namespace: NS, kubeConfig: runnerKubeConfig(server, NS) });
    try {
      expect(await other.recover()).toEqual([]);
      const found = await restarted.recover();
      const rec = found.find((f) => f.sandboxId === 'sb-recover');
      expect(rec).toMatchObject({ state: 'STATE_RUNNING' });
      expect(rec!.deadline.getTime() - rec!.startedAt.getTime()).toBe(600_000);
      expect(found.map((f) => f.sandboxId)).toEqual(expect.arrayContaining(['sb-exec', 'sb-recover']));
      await restarted.reap('sb-recover', 'REAPED_UNKNOWN');
      await waitFor(() => server.list('v1', 'Pod', NS).every((p) => p.metadata?.annotations?.['paddock.dev/sandbox-id'] !== 'sb-recover') || undefined);
      expect(server.list('networking.k8s.io/v1', 'NetworkPolicy', NS).map((n) => n.metadata?.name)).not.toContain(podNameFor('sb-recover'));
    } finally {
      await other.close();
      await restarted.close();
    }
  });
});

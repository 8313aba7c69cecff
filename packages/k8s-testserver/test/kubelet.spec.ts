import { request } from 'node:http';
import { PassThrough, Readable } from 'node:stream';
import * as k8s from '@kubernetes/client-node';
import { waitFor } from '@paddock/testing';
import { startK8sTestServer, type K8sTestServer } from '../src';
import { statusOf } from './support';

let server: K8sTestServer;
let core: k8s.CoreV1Api;

beforeAll(async () => {
  server = await startK8sTestServer({ deploymentController: false });
  core = server.kubeConfig().makeApiClient(k8s.CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: 'run' } } });
});
afterAll(async () => {
  await server.close();
});

const pod = (name: string, command: string[], extra: Partial<k8s.V1PodSpec> = {}): k8s.V1Pod => ({
  metadata: { name },
  spec: { containers: [{ name: 'main', image: 'busybox', command }], ...extra },
});

const phaseOf = async (name: string): Promise<string | undefined> => (await core.readNamespacedPod({ namespace: 'run', name })).status?.phase;

function collect(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

async function exec(name: string, command: string[], stdin?: Readable): Promise<{ stdout: string; stderr: string; status: k8s.V1Status }> {
  const out = collect();
  const err = collect();
  let status: k8s.V1Status | undefined;
  await new k8s.Exec(server.kubeConfig()).exec('run', name, 'main', command, out.stream, err.stream, stdin ?? null, false, (s) => {
    status = s;
  });
  const final = await waitFor(() => status, { what: `exec ${command.join(' ')} status` });
  return { stdout: out.text(), stderr: err.text(), status: final };
}

describe('kubelet stand-in', () => {
  it('runs a pod to Succeeded or Failed with the container exit code', async () => {
    await core.createNamespacedPod({ namespace: 'run', body: pod('ok', ['sh', '-c', 'echo done'], { restartPolicy: 'Never' }) });
    await core.createNamespacedPod({ namespace: 'run', body: pod('fail', ['sh', '-c', 'exit 3'], { restartPolicy: 'Never' }) });
    await waitFor(async () => (await phaseOf('ok')) === 'Succeeded', { what: 'ok Succeeded' });
    await waitFor(async () => (await phaseOf('fail')) === 'Failed', { what: 'fail Failed' });
    const failed = await core.readNamespacedPod({ namespace: 'run', name: 'fail' });
    expect(failed.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
    const ok = await core.readNamespacedPod({ namespace: 'run', name: 'ok' });
    expect(ok.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(ok.spec?.nodeName).toBe('node-1');
  });

  it('reads env from secretKeyRef: CreateContainerConfigError while the Secret is missing, its value once it exists', async () => {
    const env = [{ name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'creds', key: 'token' } } }];
    await core.createNamespacedPod({ namespace: 'run', body: pod('secret-env', ['sh', '-c', 'echo "token=$TOKEN"'], { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', 'echo "token=$TOKEN"'], env }] }) });
    const waiting = await waitFor(async () => (await core.readNamespacedPod({ namespace: 'run', name: 'secret-env' })).status?.containerStatuses?.[0]?.state?.waiting, { what: 'waiting on the Secret' });
    expect(waiting).toEqual({ reason: 'CreateContainerConfigError', message: 'secret "creds" not found' });
    await core.createNamespacedSecret({ namespace: 'run', body: { metadata: { name: 'creds' }, data: { token: Buffer.from('s3cret').toString('base64') } } });
    await waitFor(async () => (await phaseOf('secret-env')) === 'Succeeded', { what: 'secret-env Succeeded' });
    expect(await core.readNamespacedPodLog({ namespace: 'run', name: 'secret-env', container: 'main' })).toBe('token=s3cret\n');
  });

  it('execs echo through client-node Exec over the channel protocol, with the exit code on the status channel', async () => {
    await core.createNamespacedPod({ namespace: 'run', body: pod('shell', ['sleep', '60']) });
    await waitFor(async () => (await phaseOf('shell')) === 'Running', { what: 'shell Running' });
    const echo = await exec('shell', ['echo', 'hello from exec']);
    expect(echo.stdout).toBe('hello from exec\n');
    expect(echo.status).toMatchObject({ status: 'Success' });

    const failing = await exec('shell', ['sh', '-c', 'echo oops >&2; exit 7']);
    expect(failing.stderr).toBe('oops\n');
    expect(failing.status).toMatchObject({ status: 'Failure', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '7' }] } });

    const missing = await exec('shell', ['no-such-binary']);
    expect(missing.status.status).toBe('Failure');
    expect(missing.status.message).toContain('executable file not found in $PATH');
  });

  it('moves files in and out through exec stdin/stdout (v5 stdin close)', async () => {
    const payload = 'line one\nline two\n';
    const write = await exec('shell', ['sh', '-c', 'cat > upload.txt'], Readable.from([Buffer.from(payload)]));
    expect(write.status.status).toBe('Success');
    const read = await exec('shell', ['cat', 'upload.txt']);
    expect(read.stdout).toBe(payload);
  });

  it('refuses exec into a missing pod or container like the API server', async () => {
    const reason = async (p: Promise<unknown>): Promise<string> => {
      try {
        await p;
      } catch (e) {
        return (e as { message?: string }).message ?? String(e);
      }
      return 'no error';
    };
    const ws = new k8s.Exec(server.kubeConfig());
    expect(await reason(ws.exec('run', 'nope', 'main', ['true'], null, null, null, false))).toContain('404');
    expect(await reason(ws.exec('run', 'shell', 'other', ['true'], null, null, null, false))).toContain('400');
    // The refusal body is the API server's Status, sent before any upgrade.
    const body = await new Promise<string>((resolve, reject) => {
      const req = request(`${server.url}/api/v1/namespaces/run/pods/shell/exec?command=true&container=other`, {
        headers: { authorization: `Bearer ${server.token}`, connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', 'sec-websocket-protocol': 'v4.channel.k8s.io' },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(`${res.statusCode ?? 0} ${text}`));
      });
      req.on('error', reject);
      req.end();
    });
    expect(body).toBe('400 ' + JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'container other is not valid for pod shell', reason: 'BadRequest', code: 400 }));
  });

  it('streams pods/log with follow, tailLines and timestamps', async () => {
    await core.createNamespacedPod({ namespace: 'run', body: pod('logger', ['sh', '-c', 'for i in 1 2 3 4 5; do echo line-$i; sleep 0.2; done'], { restartPolicy: 'Never' }) });
    await waitFor(async () => (await phaseOf('logger')) === 'Running', { what: 'logger Running' });
    const followed = collect();
    let ended = false;
    followed.stream.on('end', () => {
      ended = true;
    });
    await new k8s.Log(server.kubeConfig()).log('run', 'logger', 'main', followed.stream, { follow: true });
    await waitFor(() => ended, { what: 'follow stream ends with the container', timeoutMs: 10_000 });
    expect(followed.text()).toBe('line-1\nline-2\nline-3\nline-4\nline-5\n');

    const tail = collect();
    await new k8s.Log(server.kubeConfig()).log('run', 'logger', 'main', tail.stream, { tailLines: 2, timestamps: true });
    await waitFor(() => tail.text().split('\n').length === 3, { what: 'two tail lines' });
    expect(tail.text()).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z line-4\n\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z line-5\n$/);

    const res = await core.readNamespacedPodLog({ namespace: 'run', name: 'logger', container: 'main', tailLines: 1 });
    expect(res).toBe('line-5\n');
    expect(await statusOf(core.readNamespacedPodLog({ namespace: 'run', name: 'logger', container: 'nope' }))).toMatchObject({
      code: 400,
      message: 'container nope is not valid for pod logger',
    });
  });

  it('keeps the previous instance\'s log after a restart (previous=true)', async () => {
    // Fails twice, then succeeds: with OnFailure the third instance is the last one.
    const script = 'n=$(cat count 2>/dev/null || echo 0); echo run-$n; echo $((n + 1)) > count; [ "$n" -ge 2 ]';
    await core.createNamespacedPod({ namespace: 'run', body: pod('restarter', ['sh', '-c', script], { restartPolicy: 'OnFailure' }) });
    const done = await waitFor(async () => {
      const p = await core.readNamespacedPod({ namespace: 'run', name: 'restarter' });
      return p.status?.phase === 'Succeeded' ? p : undefined;
    }, { what: 'restarter Succeeded', timeoutMs: 10_000 });
    expect(done.status?.containerStatuses?.[0]?.restartCount).toBe(2);
    expect(await core.readNamespacedPodLog({ namespace: 'run', name: 'restarter', container: 'main' })).toBe('run-2\n');
    expect(await core.readNamespacedPodLog({ namespace: 'run', name: 'restarter', container: 'main', previous: true })).toBe('run-1\n');
  });

  it('enforces activeDeadlineSeconds: the pod fails with DeadlineExceeded and its process is killed', async () => {
    await core.createNamespacedPod({ namespace: 'run', body: pod('capped', ['sleep', '300'], { activeDeadlineSeconds: 1 }) });
    const failed = await waitFor(async () => {
      const p = await core.readNamespacedPod({ namespace: 'run', name: 'capped' });
      return p.status?.phase === 'Failed' ? p : undefined;
    }, { what: 'DeadlineExceeded', timeoutMs: 10_000 });
    expect(failed.status).toMatchObject({ reason: 'DeadlineExceeded', message: 'Pod was active on the node longer than the specified deadline' });
    expect(failed.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(137);
    const started = Date.parse(failed.status?.startTime?.toString() ?? '');
    expect(Number.isNaN(started)).toBe(false);
  });

  it('terminates every pod by its deadline + 5 s with no controller running (K-7 building block)', async () => {
    const n = process.env.PADDOCK_SOAK ? 1000 : 40;
    const deadline = 2;
    await core.createNamespace({ body: { metadata: { name: 'k7' } } });
    const t0 = Date.now();
    for (let batch = 0; batch < n; batch += 20) {
      await Promise.all(
        Array.from({ length: Math.min(20, n - batch) }, (_, j) =>
          core.createNamespacedPod({ namespace: 'k7', body: { metadata: { name: `s${batch + j}` }, spec: { activeDeadlineSeconds: deadline, containers: [{ name: 'main', image: 'busybox', command: ['sleep', '300'] }] } } }),
        ),
      );
    }
    const createdIn = Date.now() - t0;
    const failedAt = new Map<string, number>();
    await waitFor(() => {
      for (const p of server.list('v1', 'Pod', 'k7')) {
        const st = p.status as { phase?: string; reason?: string } | undefined;
        if (st?.phase === 'Failed' && st.reason === 'DeadlineExceeded' && !failedAt.has(p.metadata.name ?? '')) failedAt.set(p.metadata.name ?? '', Date.now());
      }
      return failedAt.size === n;
    }, { what: `${n} pods past their deadline`, timeoutMs: createdIn + (deadline + 5) * 1000 });
    // Every pod started no earlier than t0, so its deadline fell no later than t0 + createdIn + deadline.
    const latest = Math.max(...failedAt.values()) - t0;
    console.log(`K-7: ${n} pods, created in ${createdIn} ms, all terminated by ${latest} ms (deadline ${deadline} s)`);
    expect(latest).toBeLessThanOrEqual(createdIn + (deadline + 5) * 1000);
  });

  it('deletes a running pod gracefully: deletionTimestamp first, then gone once its process is stopped', async () => {
    await core.createNamespacedPod({ namespace: 'run', body: pod('victim', ['sleep', '300'], { terminationGracePeriodSeconds: 5 }) });
    await waitFor(async () => (await phaseOf('victim')) === 'Running', { what: 'victim Running' });
    const deleting = await core.deleteNamespacedPod({ namespace: 'run', name: 'victim' });
    expect(deleting.metadata?.deletionTimestamp).toBeDefined();
    expect(deleting.metadata?.deletionGracePeriodSeconds).toBe(5);
    await waitFor(() => server.get('v1', 'Pod', 'victim', 'run') === undefined, { what: 'victim removed' });
  });
});

// k8s-testserver benchmarks: each figure beside a floor measured in the same run on this machine.
//   pnpm bench   (RUNS=3 N=200 by default)
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import * as k8s from '@kubernetes/client-node';
import { latencyStats, medianOf, report, row, timeSequential, waitFor, type BenchRow } from '@paddock/testing';
import { startK8sTestServer } from '../src';

const RUNS = Number(process.env.RUNS ?? 3);
const N = Number(process.env.N ?? 200);

async function repeat(fn: () => Promise<number>): Promise<number[]> {
  const out: number[] = [];
  for (let r = 0; r < RUNS; r++) out.push(await fn());
  return out;
}

const p50 = (samples: number[]): number => latencyStats(samples).p50;

async function main(): Promise<void> {
  // Floor: a bare node:http JSON round trip with fetch, and a bare local process spawn.
  const bare = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(201, { 'Content-Type': 'application/json' }).end('{"ok":true}'));
  });
  await new Promise<void>((r) => bare.listen(0, '127.0.0.1', r));
  const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/`;
  const httpFloor = await repeat(async () => p50(await timeSequential(() => fetch(bareUrl, { method: 'POST', body: '{"a":1}' }).then((r) => r.text()), N)));
  const spawnFloor = await repeat(async () =>
    p50(await timeSequential(() => new Promise<void>((resolve) => spawn('echo', ['x']).on('close', () => resolve())), Math.min(N, 50))),
  );

  const server = await startK8sTestServer({ deploymentController: false });
  const kc = server.kubeConfig();
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: 'bench' } } });
  let i = 0;
  const createCm = await repeat(async () =>
    p50(await timeSequential(() => core.createNamespacedConfigMap({ namespace: 'bench', body: { metadata: { name: `cm-${i++}` }, data: { k: 'v' } } }), N)),
  );

  // Write → informer callback latency.
  const informer = k8s.makeInformer(kc, '/api/v1/namespaces/bench/configmaps', () => core.listNamespacedConfigMap({ namespace: 'bench' }));
  let seen = '';
  informer.on(k8s.UPDATE, (o) => {
    seen = o.data?.k ?? '';
  });
  await informer.start();
  let v = 0;
  const watchLatency = await repeat(async () =>
    p50(
      await timeSequential(async () => {
        const want = String(++v);
        await core.patchNamespacedConfigMap({ namespace: 'bench', name: 'cm-0', body: { data: { k: want } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
        await waitFor(() => seen === want, { intervalMs: 1 });
      }, N),
    ),
  );
  await informer.stop();

  // Exec round trip into a kubelet-run pod.
  await core.createNamespacedPod({ namespace: 'bench', body: { metadata: { name: 'sh' }, spec: { containers: [{ name: 'main', image: 'busybox', command: ['sleep', '600'] }] } } });
  await waitFor(async () => (await core.readNamespacedPod({ namespace: 'bench', name: 'sh' })).status?.phase === 'Running');
  const execOnce = async (): Promise<void> => {
    let done = false;
    await new k8s.Exec(kc).exec('bench', 'sh', 'main', ['echo', 'x'], new PassThrough(), new PassThrough(), null, false, () => {
      done = true;
    });
    await waitFor(() => done, { intervalMs: 1 });
  };
  const execLatency = await repeat(async () => p50(await timeSequential(execOnce, Math.min(N, 50))));

  const floorHttp = { name: 'bare http POST round trip p50', median: medianOf(httpFloor) };
  const rows: BenchRow[] = [
    row('bare http POST round trip p50', 'ms', httpFloor),
    row('create ConfigMap (client-node → test server) p50', 'ms', createCm, { floor: floorHttp }),
    row('merge-patch → informer UPDATE callback p50', 'ms', watchLatency, { floor: floorHttp }),
    row('bare spawn echo p50', 'ms', spawnFloor),
    row('pods/exec echo over WebSocket (client-node Exec) p50', 'ms', execLatency, { floor: { name: 'bare spawn echo p50', median: medianOf(spawnFloor) } }),
  ];
  report('k8s-testserver', rows);
  await server.close();
  bare.close();
}

void main();

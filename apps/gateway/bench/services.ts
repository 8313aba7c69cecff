import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { latencyStats, report, row, waitFor, type BenchRow } from '@paddock/testing';
import { IMAGE, startCluster } from '../test/support/cluster';
import { http } from '../test/support/infra';

/**
 * Sandboxes with several containers and public services, beside floors measured in this run:
 * - create → RUNNING of a two-container sandbox (a sidecar beside the primary) against the
 *   one-container figure, interleaved;
 * - an HTTP GET through a service URL (gateway → NATS → runner → supervisor relay → the sandbox's
 *   loopback) against the same GET straight to the same server run on the host.
 * The gateway runs in this process (the test cluster's), the runner as its own.
 */
const N = Number(process.env.PADDOCK_BENCH_N ?? 20);
const REQUESTS = 200;
const progress = (stage: string): void => void process.stderr.write(`[bench services] ${new Date().toISOString()} ${stage}\n`);

function get(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request(url, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`GET ${url}: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function main(): Promise<void> {
  const c = await startCluster({ runnerIds: ['r-large'], sandboxCapacity: { 'r-large': 200 } });
  const hostPort = await freePort();
  const hostServer = spawn('python3', ['-m', 'http.server', String(hostPort), '--bind', '127.0.0.1', '--directory', '/usr/share/common-licenses'], { stdio: 'ignore' });
  process.once('exit', () => hostServer.kill('SIGKILL'));
  const created: string[] = [];
  const cleanup = async (): Promise<void> => {
    await Promise.all(created.splice(0).map((id) => http(c.gw.url, 'DELETE', `/v1/sandboxes/${id}`, c.token)));
  };
  try {
    const one = { containers: [{ image: IMAGE, resources: { cpu: '100m', memory: '128Mi' } }] };
    const two = {
      primaryContainer: 'main',
      containers: [
        { name: 'main', image: IMAGE, resources: { cpu: '100m', memory: '128Mi' } },
        { name: 'side', image: IMAGE, command: ['sleep', 'infinity'], resources: { cpu: '100m', memory: '128Mi' } },
      ],
    };
    const createToRunning = async (spec: unknown): Promise<number> => {
      const t0 = performance.now();
      const r = await http(c.gw.url, 'POST', '/v1/sandboxes', c.token, { spec });
      const sb = r.json as { sandboxId: string; status: { state: string } };
      if (r.status !== 200) throw new Error(`create failed: ${r.text}`);
      created.push(sb.sandboxId);
      let state = sb.status.state;
      while (state !== 'STATE_RUNNING') {
        if (state === 'STATE_FAILED') throw new Error(`sandbox failed: ${sb.sandboxId}`);
        state = ((await http(c.gw.url, 'GET', `/v1/sandboxes/${sb.sandboxId}:wait?timeoutSeconds=30`, c.token)).json as { status: { state: string } }).status.state;
      }
      return performance.now() - t0;
    };

    progress('create → RUNNING, one and two containers interleaved');
    await createToRunning(one);
    await createToRunning(two);
    await cleanup();
    const times = { one: [] as number[], two: [] as number[] };
    for (let i = 0; i < N; i++) {
      times.one.push(await createToRunning(one));
      times.two.push(await createToRunning(two));
      if (created.length >= 20) await cleanup();
    }
    await cleanup();

    progress('HTTP through a service URL, and straight to the same server on the host');
    const web = await http(c.gw.url, 'POST', '/v1/sandboxes', c.token, {
      containers: [
        {
          image: IMAGE,
          command: ['python3', '-m', 'http.server', '8000', '--bind', '127.0.0.1', '--directory', '/usr/share/common-licenses'],
          resources: { cpu: '1', memory: '256Mi' },
        },
      ],
      services: [{ port: 8000, visibility: 'VISIBILITY_PUBLIC', endpoint: { kind: 'ENDPOINT_KIND_HTTPS', auth: 'ENDPOINT_AUTH_OPEN' } }],
    });
    const id = (web.json as { sandboxId: string }).sandboxId;
    created.push(id);
    const url = await waitFor(
      async () => {
        const sb = (await http(c.gw.url, 'GET', `/v1/sandboxes/${id}`, c.token)).json as { status: { state: string; services?: { endpoint?: { url?: string } }[] } };
        const u = sb.status.services?.[0]?.endpoint?.url;
        return sb.status.state === 'STATE_RUNNING' && u ? u : undefined;
      },
      { timeoutMs: 30_000, what: 'the service URL' },
    );
    const file = 'BSD';
    await waitFor(() => get(`${url}${file}`).then(() => true, () => false), { timeoutMs: 15_000, what: 'the sandbox server' });
    await waitFor(() => get(`http://127.0.0.1:${hostPort}/${file}`).then(() => true, () => false), { timeoutMs: 15_000, what: 'the host server' });
    const lat = { service: [] as number[], host: [] as number[] };
    for (let i = 0; i < 20; i++) {
      await get(`${url}${file}`);
      await get(`http://127.0.0.1:${hostPort}/${file}`);
    }
    for (let i = 0; i < REQUESTS; i++) {
      lat.service.push(await get(`${url}${file}`));
      lat.host.push(await get(`http://127.0.0.1:${hostPort}/${file}`));
    }
    await cleanup();

    const oneS = latencyStats(times.one);
    const twoS = latencyStats(times.two);
    const svc = latencyStats(lat.service);
    const host = latencyStats(lat.host);
    const rows: BenchRow[] = [
      row('create → RUNNING two containers p50 (interleaved with one)', 'ms', [twoS.p50], {
        floor: { name: 'create → RUNNING one container p50', median: oneS.p50 },
        note: `n=${N} each; p99 two ${twoS.p99.toFixed(1)} ms, one ${oneS.p99.toFixed(1)} ms`,
      }),
      row('HTTP GET through a service URL p50', 'ms', [svc.p50], {
        floor: { name: 'the same GET straight to the same server on the host p50', median: host.p50 },
        note: `n=${REQUESTS} interleaved; one relayed connection per request; p99 ${svc.p99.toFixed(1)} ms vs ${host.p99.toFixed(1)} ms`,
      }),
      row('service URL overhead p50', 'ms', [svc.p50 - host.p50], { note: 'gateway + NATS stream + runner + supervisor relay' }),
    ];
    report('gateway-services', rows);
  } finally {
    await cleanup().catch(() => undefined);
    hostServer.kill('SIGTERM');
    await c.stop();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);

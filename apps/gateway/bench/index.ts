import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { subjects } from '@paddock/contracts';
import { latencyStats, provisionGatewayRole, report, row, startNats, startPostgres, timeSequential, waitFor, type BenchRow } from '@paddock/testing';
import { startControlPlane } from '../test/support/control-plane';
import { startRunner } from '../test/support/runners';
import { IMAGE } from '../test/support/cluster';
import { grpcClient } from '../test/support/grpc-clients';
import { bwrapInCgroupMs, concurrentBwrapsMs, fastifyRoundTripMs, grpcStackRoundTripMs, natsRequestReplyMs, p50, twoPgCommitsMs } from './floors';

/**
 * Gateway benchmarks beside the floor of the same path with bare parts, measured in this run.
 * N scales with PADDOCK_BENCH_N (default 40 sequential creates, a burst of 50, 200 execs).
 */
const N = Number(process.env.PADDOCK_BENCH_N ?? 30);
const BURST = 50;
const EXECS = 100;
async function timeOnceMs(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}
const progress = (stage: string): void => void process.stderr.write(`[bench] ${new Date().toISOString()} ${stage}\n`);

async function main(): Promise<void> {
  const [pg, nats] = await Promise.all([startPostgres(), startNats()]);
  // The real control plane (migrations, fixtures through its API) and the gateway's own role.
  const databaseUrl = await pg.createDatabase('bench');
  const cp = await startControlPlane(databaseUrl, nats);
  const gatewayDatabaseUrl = await provisionGatewayRole(databaseUrl);
  const orgId = cp.organizationId;
  const { token } = await cp.issueToken('SANDBOX_USER');
  const policyEtag = await cp.declareRunner('r-bench', {});

  const runner = startRunner({ runnerId: 'r-bench', organizationId: orgId, nats: await nats.env('runner', 'r-bench'), policy: {}, policyEtag, heartbeatMs: 1000, capacitySandboxes: 500 });
  const port = 18000 + Math.floor(Math.random() * 2000);
  const grpcPort = port + 2000;
  // The gateway as its own process (its Nest shell injects by explicit tokens, so tsx runs it).
  const gateway: ChildProcess = spawn(process.execPath, ['--conditions=@paddock/source', '--import', 'tsx', join(__dirname, '..', 'src', 'main.ts')], {
    env: { PATH: process.env.PATH, DATABASE_URL: gatewayDatabaseUrl, ...(await nats.env('gateway', 'gateway')), GATEWAY_PORT: String(port), GATEWAY_GRPC_PORT: String(grpcPort), GATEWAY_HOST: '127.0.0.1', GATEWAY_LOG_LEVEL: 'error' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  // An interrupted bench still tears down what it started (the helpers clean up on 'exit').
  process.once('exit', () => gateway.kill('SIGKILL'));
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));
  const base = `http://127.0.0.1:${port}`;
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const spec = { containers: [{ image: IMAGE, resources: { cpu: '100m', memory: '128Mi' } }] };
  const created: string[] = [];

  try {
    await waitFor(
      async () => {
        const r = await fetch(`${base}/v1/sandboxes:explain`, { method: 'POST', headers, body: JSON.stringify({ spec }) });
        return r.ok && ((await r.json()) as { wouldPlaceOn: string | null }).wouldPlaceOn === 'r-bench';
      },
      { timeoutMs: 180_000, intervalMs: 250, what: 'gateway up and runner heartbeating' },
    );

    const createToRunning = async (withSpec: typeof spec = spec): Promise<number> => {
      const t0 = performance.now();
      const r = await fetch(`${base}/v1/sandboxes`, { method: 'POST', headers, body: JSON.stringify({ spec: withSpec }) });
      const sb = (await r.json()) as { sandboxId: string; status: { state: string } };
      if (!r.ok) throw new Error(`create failed: ${JSON.stringify(sb)}`);
      created.push(sb.sandboxId);
      let state = sb.status.state;
      // The gateway's long poll (what the SDK's wait() uses): answered as soon as the state moves.
      while (state !== 'STATE_RUNNING') {
        if (state === 'STATE_FAILED') throw new Error(`sandbox failed: ${sb.sandboxId}`);
        state = ((await (await fetch(`${base}/v1/sandboxes/${sb.sandboxId}:wait?timeoutSeconds=30`, { headers })).json()) as { status: { state: string } }).status.state;
      }
      return performance.now() - t0;
    };
    const cleanup = async (): Promise<void> => {
      await Promise.all(created.splice(0).map((id) => fetch(`${base}/v1/sandboxes/${id}`, { method: 'DELETE', headers: { authorization: headers.authorization } })));
    };

    progress('gateway up; measuring floors');
    // Floors of the bare parts (same machine, same run).
    const fastifyMs = await fastifyRoundTripMs(300);
    const grpcStackMs = await grpcStackRoundTripMs(300);
    const pgMs = await twoPgCommitsMs(databaseUrl, 300);
    const natsMs = await natsRequestReplyMs(nats, 300);
    const bwrapMs = await bwrapInCgroupMs(Math.max(20, N));
    const burstFloor = latencyStats(await concurrentBwrapsMs(BURST));
    const floorP50 = p50(fastifyMs) + p50(pgMs) + p50(natsMs) + p50(bwrapMs);
    const floorP99 = latencyStats(fastifyMs).p99 + latencyStats(pgMs).p99 + latencyStats(natsMs).p99 + latencyStats(bwrapMs).p99;

    progress('create → RUNNING sequential');
    // create → RUNNING, sequential.
    await createToRunning();
    await cleanup();
    const seq: number[] = [];
    for (let i = 0; i < N; i++) seq.push(await createToRunning());
    await cleanup();
    const seqStats = latencyStats(seq);

    progress('create → RUNNING burst');
    // create → RUNNING, burst of 50 at once.
    const burst = await Promise.all(Array.from({ length: BURST }, () => createToRunning()));
    await cleanup();
    const burstStats = latencyStats(burst);

    progress('exec round trips');
    // Exec round trip: through the gateway (HTTP unary :exec) and straight to the runner (NATS).
    // In a 1-CPU sandbox: exec'd commands are charged to the sandbox's own quota, and a tight exec
    // loop in a 100m sandbox is held to 10 ms of CPU per 100 ms (that is the quota working).
    const sbId = await (async () => {
      await createToRunning({ containers: [{ image: IMAGE, resources: { cpu: '1', memory: '128Mi' } }] });
      return created[0] as string;
    })();
    const nc = await nats.connectAs('gateway', 'gateway');
    progress('exec via gateway');
    let lost = 0;
    const execViaGateway = async (): Promise<void> => {
      const r = await fetch(`${base}/v1/sandboxes/${sbId}:exec`, { method: 'POST', headers, body: JSON.stringify({ command: ['true'], timeoutSeconds: 5 }) });
      if (!r.ok) lost++;
      await r.json();
    };
    const execStraight = (): Promise<unknown> =>
      nc
        .request(subjects.runnerRpc('r-bench', 'exec'), JSON.stringify({ sandboxId: sbId, organizationId: orgId, argv: ['true'], timeoutSeconds: 5 }), { timeout: 5_000 })
        .catch(() => void lost++);
    const viaGateway = (await timeSequential(execViaGateway, EXECS)).filter((ms) => ms < 5_000);
    // Attribution of the overhead: the HTTP stack alone, then auth plus the sandbox lookup.
    const health = latencyStats(await timeSequential(async () => void (await (await fetch(`${base}/healthz`)).text()), EXECS));
    const getOne = latencyStats(
      await timeSequential(async () => void (await (await fetch(`${base}/v1/sandboxes/${sbId}`, { headers })).json()), EXECS),
    );
    progress('exec straight to the runner');
    const direct = (await timeSequential(execStraight, EXECS)).filter((ms) => ms < 5_000);
    progress('exec through a bare relay (attribution)');
    // The floor of "one more HTTP process in front of the runner": a bare Fastify→NATS relay.
    const relay = spawn(process.execPath, ['--conditions=@paddock/source', '--import', 'tsx', join(__dirname, 'relay-floor.ts')], {
      env: { PATH: process.env.PATH, ...(await nats.env('gateway', 'relay-floor')) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    process.once('exit', () => relay.kill('SIGKILL'));
    const relayPort = await new Promise<string>((resolve, reject) => {
      relay.stdout?.once('data', (d: Buffer) => resolve(d.toString().trim()));
      relay.once('exit', (code) => reject(new Error(`relay floor exited ${code}`)));
    });
    const execViaRelay = async (): Promise<void> => {
      const r = await fetch(`http://127.0.0.1:${relayPort}/r-bench/${orgId}/${sbId}`, { method: 'POST', headers, body: JSON.stringify({ command: ['true'], timeoutSeconds: 5 }) });
      if (!r.ok) lost++;
      await r.json();
    };
    const viaRelay = (await timeSequential(execViaRelay, EXECS)).filter((ms) => ms < 5_000);
    // The gateway through node:http with a keep-alive agent (the client the CLI uses): fetch's
    // own cost is a client library's, not the gateway's (see the fetch rows).
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const execBody = JSON.stringify({ command: ['true'], timeoutSeconds: 5 });
    const execViaGatewayHttp = (): Promise<void> =>
      new Promise<void>((resolve, reject) => {
        const req = request(
          { host: '127.0.0.1', port, method: 'POST', path: `/v1/sandboxes/${sbId}:exec`, agent, headers: { ...headers, 'content-length': Buffer.byteLength(execBody) } },
          (res) => {
            if (res.statusCode !== 200) lost++;
            res.resume();
            res.on('end', resolve);
          },
        );
        req.on('error', reject);
        req.end(execBody);
      });
    progress('exec interleaved: gateway (node:http) and straight');
    const lean = { gw: [] as number[], raw: [] as number[] };
    for (let i = 0; i < EXECS * 2; i++) {
      lean.gw.push(await timeOnceMs(execViaGatewayHttp));
      lean.raw.push(await timeOnceMs(execStraight));
    }
    progress('exec interleaved: gRPC (grpc-js, the SDKs\' stack), REST (node:http) and straight');
    // The same exec through the coreweave.sandbox.v1 gRPC surface, one of each path in turn.
    const grpc = grpcClient(`http://127.0.0.1:${grpcPort}`);
    const execViaGrpc = async (): Promise<void> => {
      const res = await grpc.unary('Exec', { sandboxId: sbId, command: ['true'] }, token).catch(() => null);
      if (!res || res.exitCode !== 0) lost++;
    };
    await execViaGrpc(); // the channel connects on its first call
    const overGrpc = { grpc: [] as number[], rest: [] as number[], raw: [] as number[] };
    for (let i = 0; i < EXECS * 2; i++) {
      overGrpc.grpc.push(await timeOnceMs(execViaGrpc));
      overGrpc.rest.push(await timeOnceMs(execViaGatewayHttp));
      overGrpc.raw.push(await timeOnceMs(execStraight));
    }
    grpc.close();
    agent.destroy();
    progress('exec interleaved: gateway, straight, relay (attribution)');
    // The same three paths, one request of each in turn: load that comes and goes on a shared
    // machine (or the runner still reaping the burst) then weighs on all three alike.
    const inter = { gw: [] as number[], raw: [] as number[], relay: [] as number[] };
    for (let i = 0; i < EXECS; i++) {
      inter.gw.push(await timeOnceMs(execViaGateway));
      inter.raw.push(await timeOnceMs(execStraight));
      inter.relay.push(await timeOnceMs(execViaRelay));
    }
    relay.kill('SIGTERM');
    await nc.close();
    await cleanup();
    const gw = latencyStats(viaGateway);
    const raw = latencyStats(direct);
    const bare = latencyStats(viaRelay);
    const [iGw, iRaw, iRelay] = [inter.gw, inter.raw, inter.relay].map((xs) => latencyStats(xs.filter((ms) => ms < 5_000)).p50) as [number, number, number];
    const [leanGw, leanRaw] = [lean.gw, lean.raw].map((xs) => latencyStats(xs.filter((ms) => ms < 5_000)).p50) as [number, number];
    const [gGrpc, gRest, gRaw] = [overGrpc.grpc, overGrpc.rest, overGrpc.raw].map((xs) => latencyStats(xs.filter((ms) => ms < 5_000)).p50) as [number, number, number];

    const rows: BenchRow[] = [
      row('floor: fastify request', 'ms p50', [p50(fastifyMs)]),
      row('floor: two postgres commits', 'ms p50', [p50(pgMs)]),
      row('floor: grpc-js unary to a bare connect-node h2c server', 'ms p50', [p50(grpcStackMs)], { note: 'the gRPC stack alone (client and server)' }),
      row('floor: nats request/reply', 'ms p50', [p50(natsMs)]),
      row('floor: bwrap spawn in cgroups', 'ms p50', [p50(bwrapMs)]),
      row('create → RUNNING sequential p50', 'ms', [seqStats.p50], { floor: { name: 'sum of bare parts p50', median: floorP50 }, target: '≤ 3× floor' }),
      row('create → RUNNING sequential p99', 'ms', [seqStats.p99], { floor: { name: 'sum of bare parts p99', median: floorP99 } }),
      row(`create → RUNNING burst of ${BURST} p50`, 'ms', [burstStats.p50], { floor: { name: 'sum of bare parts p50', median: floorP50 } }),
      row(`create → RUNNING burst of ${BURST} p99`, 'ms', [burstStats.p99], {
        floor: { name: `${BURST} concurrent bare bwraps p99`, median: burstFloor.p99 },
        target: '< 100 ms',
      }),
      row('exec round trip via gateway p50 (node:http keep-alive, interleaved)', 'ms', [leanGw], { floor: { name: 'exec straight to runner (NATS) p50', median: leanRaw } }),
      row('gateway overhead on exec p50 (node:http keep-alive, interleaved)', 'ms', [leanGw - leanRaw], {
        target: '< 2 ms',
        note: lost ? `${lost} exec replies lost or timed out (excluded)` : undefined,
      }),
      row('exec round trip via gRPC p50 (grpc-js unary Exec, interleaved with REST and NATS)', 'ms', [gGrpc], {
        floor: { name: 'exec straight to runner (NATS) p50', median: gRaw },
      }),
      row('exec round trip via REST p50 (node:http keep-alive, interleaved with gRPC and NATS)', 'ms', [gRest], {
        floor: { name: 'exec straight to runner (NATS) p50', median: gRaw },
      }),
      row('gRPC minus REST on exec p50 (same interleave)', 'ms', [gGrpc - gRest], { note: 'attribution: the gRPC stack (HTTP/2 framing, protobuf) against REST JSON' }),
      row('exec round trip via gateway p50 (fetch)', 'ms', [gw.p50], { floor: { name: 'exec straight to runner (NATS) p50', median: raw.p50 } }),
      row('exec round trip via gateway p99 (fetch)', 'ms', [gw.p99], { floor: { name: 'exec straight to runner (NATS) p99', median: raw.p99 } }),
      row('GET /healthz via fetch p50 (HTTP client + server, no auth)', 'ms', [health.p50], { note: 'attribution' }),
      row('GET /v1/sandboxes/{id} via fetch p50 (auth + 1 query)', 'ms', [getOne.p50], { note: 'attribution' }),
      row('exec via a bare Fastify→NATS relay p50 (no auth, DB, Nest)', 'ms', [bare.p50], { note: 'attribution' }),
      row('bare relay overhead on exec p50 (floor of an HTTP hop)', 'ms', [bare.p50 - raw.p50], { note: 'attribution' }),
      row('interleaved: exec via gateway / straight / bare relay p50', 'ms', [iGw], {
        floor: { name: 'straight to runner p50', median: iRaw },
        note: `attribution; bare relay ${iRelay.toFixed(2)} ms`,
      }),
      row('interleaved: gateway overhead on exec p50', 'ms', [iGw - iRaw], { note: `attribution; bare relay overhead ${(iRelay - iRaw).toFixed(2)} ms` }),
      row('gateway overhead on exec p50 (fetch client, sequential blocks)', 'ms', [gw.p50 - raw.p50], { note: 'attribution: fetch adds its own cost per request' }),
    ];
    report('gateway', rows);
  } finally {
    gateway.kill('SIGTERM');
    await runner.stop();
    await cp.stop();
    await nats.stop();
    pg.stop();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);

import { spawn } from 'node:child_process';
import http2 from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { create } from '@bufbuild/protobuf';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { SandboxSchema, SandboxService } from '@paddock/proto';
import { grpcClient } from '../test/support/grpc-clients';
import { existsSync, mkdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Fastify from 'fastify';
import { subjects } from '@paddock/contracts';
import { Pool } from 'pg';
import { RawHttpClient } from './raw-http-client';
import { BARE_BWRAP_ROOT, latencyStats, timeSequential, type ThrowawayNats } from '@paddock/testing';

/**
 * The bare parts of the create path, measured in the same run as the gateway figures: one
 * Fastify request, two Postgres commits, one NATS request/reply, one bwrap spawn in a cgroup.
 */
export async function fastifyRoundTripMs(n: number, client?: LeanHttp): Promise<number[]> {
  const app = await bareFastify();
  const get = client
    ? () => client.request('GET', app.url)
    : async () => (await fetch(app.url)).json();
  const samples = await timeSequential(get, n);
  await app.close();
  return samples;
}

async function bareFastify(): Promise<{ url: string; close: () => Promise<void> }> {
  const app = Fastify();
  app.get('/', async () => ({ ok: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  return {
    url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/`,
    close: () => app.close(),
  };
}

export interface LeanHttp {
  /** JSON in, JSON out; rejects on a transport error, resolves with any status. */
  request(
    method: string,
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; json: unknown }>;
  close(): void;
}

/**
 * The benches' HTTP client: a load generator's minimal HTTP/1.1 keep-alive client (see
 * RawHttpClient). It shares the machine's two CPUs with the platform, so its own cost is taken
 * from the figures: node:http with a keep-alive Agent (what the CLI uses) spent 1.37 ms of CPU per
 * warm first command in the burst of 50, undici's fetch more. The floor is measured with the same
 * client.
 */
export function leanHttp(): LeanHttp {
  const client = new RawHttpClient();
  return {
    request: (method, url, body, headers) => client.request(method, url, body, headers),
    close: () => client.close(),
  };
}

/**
 * The burst floor: `n` bare first commands at once, each the parts of the real one in its order
 * (HTTP create with a commit, a NATS request/reply and a second commit; HTTP wait; HTTP exec with
 * a NATS request/reply), against a bare Fastify, a Postgres pool the gateway's size and a NATS
 * responder. What a burst costs this machine before any of Paddock's own work.
 */
export async function burstFloorMs(
  n: number,
  client: LeanHttp,
  databaseUrl: string,
  nats: ThrowawayNats,
): Promise<number[]> {
  const app = await bareFastify();
  const pool = new Pool({ connectionString: databaseUrl, max: 20 });
  await pool.query('CREATE TABLE IF NOT EXISTS bench_floor (id serial PRIMARY KEY, v text)');
  const server = await nats.connectAs('runner', 'bench-burst-floor');
  const nc = await nats.connectAs('gateway', 'gateway');
  const subject = subjects.runnerRpc('bench-burst-floor', 'get');
  server.subscribe(subject, { callback: (_e, m) => void m.respond(m.data) });
  await server.flush();
  const one = async (): Promise<number> => {
    const t0 = performance.now();
    await client.request('GET', app.url);
    await pool.query('INSERT INTO bench_floor (v) VALUES ($1)', ['a']);
    await nc.request(subject, '{}', { timeout: 10_000 });
    await pool.query('INSERT INTO bench_floor (v) VALUES ($1)', ['b']);
    await client.request('GET', app.url);
    await client.request('GET', app.url);
    await nc.request(subject, '{}', { timeout: 10_000 });
    return performance.now() - t0;
  };
  await Promise.all(Array.from({ length: n }, one)); // warm the pool's connections and the sockets
  const samples = await Promise.all(Array.from({ length: n }, one));
  await nc.close();
  await server.close();
  await pool.end();
  await app.close();
  return samples;
}

export async function twoPgCommitsMs(databaseUrl: string, n: number): Promise<number[]> {
  const pool = new Pool({ connectionString: databaseUrl, max: 2 });
  await pool.query('CREATE TABLE IF NOT EXISTS bench_floor (id serial PRIMARY KEY, v text)');
  const samples = await timeSequential(async () => {
    await pool.query('INSERT INTO bench_floor (v) VALUES ($1)', ['a']);
    await pool.query('INSERT INTO bench_floor (v) VALUES ($1)', ['b']);
  }, n);
  await pool.end();
  return samples;
}

/** Request/reply between a gateway user and a runner user (the platform's own permissions). */
export async function natsRequestReplyMs(nats: ThrowawayNats, n: number): Promise<number[]> {
  const server = await nats.connectAs('runner', 'bench-floor');
  const client = await nats.connectAs('gateway', 'gateway');
  const subject = subjects.runnerRpc('bench-floor', 'get');
  server.subscribe(subject, { callback: (_e, m) => void m.respond(m.data) });
  await server.flush();
  const samples = await timeSequential(() => client.request(subject, '{}', { timeout: 5000 }), n);
  await client.close();
  await server.close();
  return samples;
}

/** `sh` joins fresh cpu/memory/pids cgroups (v1) then execs bwrap, whose shell prints "ready". */
export async function bwrapInCgroupMs(n: number): Promise<number[]> {
  const base = '/sys/fs/cgroup';
  const controllers = ['cpu', 'memory', 'pids'].filter((c) => existsSync(join(base, c)));
  let k = 0;
  const failures: string[] = [];
  const once = async (): Promise<void> => {
    const dirs = controllers.map((c) => join(base, c, `paddock-bench-floor-${process.pid}-${k}`));
    k++;
    for (const d of dirs) mkdirSync(d, { recursive: true });
    const memDir = dirs.find((d) => d.includes('/memory/'));
    if (memDir) writeFileSync(join(memDir, 'memory.limit_in_bytes'), String(256 * 1024 * 1024));
    const join_ = dirs.map((d) => `echo $$ > ${d}/cgroup.procs`).join('; ');
    await new Promise<void>((resolve, reject) => {
      const child = spawn(
        'sh',
        [
          '-c',
          `${join_}; exec bwrap ${BARE_BWRAP_ROOT.join(' ')} --dev /dev --proc /proc --unshare-pid --die-with-parent sh -c 'echo ready'`,
        ],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.stdout.once('data', () => resolve());
      child.once('error', reject);
      child.once('exit', (code) =>
        code === 0 ? resolve() : reject(new Error(`bwrap exited ${code}: ${err.trim()}`)),
      );
    }).catch((e: unknown) => {
      failures.push(e instanceof Error ? e.message : String(e));
    });
    await new Promise((r) => setTimeout(r, 5));
    for (const d of dirs) {
      try {
        rmdirSync(d);
      } catch {
        // the process may still be exiting; leftovers are empty cgroups
      }
    }
  };
  const samples = await timeSequential(once, n, 3);
  if (failures.length) {
    process.stderr.write(
      `[bench] ${failures.length} bwrap floor spawns failed, e.g. ${failures[0]}\n`,
    );
  }
  if (failures.length > n / 2) throw new Error(`bwrap floor unusable: ${failures[0]}`);
  return samples;
}

/**
 * The burst floor: `n` bare bwraps (same namespaces as a sandbox, no cgroups, no supervisor)
 * started at once, each timed to its exit. What a burst of creations costs the machine before
 * any of Paddock's own work.
 */
export async function concurrentBwrapsMs(n: number): Promise<number[]> {
  const one = (): Promise<number> =>
    new Promise((resolve, reject) => {
      const t0 = performance.now();
      const child = spawn(
        'bwrap',
        [
          '--ro-bind',
          '/',
          '/',
          '--dev',
          '/dev',
          '--proc',
          '/proc',
          '--unshare-pid',
          '--unshare-net',
          '--die-with-parent',
          '/bin/true',
        ],
        { stdio: 'ignore' },
      );
      child.once('error', reject);
      child.once('exit', () => resolve(performance.now() - t0));
    });
  return Promise.all(Array.from({ length: n }, one));
}

export const p50 = (s: number[]): number => latencyStats(s).p50;

/**
 * The gRPC stack alone: @grpc/grpc-js (the SDKs' client) calling a bare connect-node h2c server
 * (the gateway's) whose GetSandbox answers at once: no auth, database or NATS.
 */
export async function grpcStackRoundTripMs(n: number): Promise<number[]> {
  const server = http2.createServer(
    connectNodeAdapter({
      routes: (r) =>
        r.service(SandboxService, {
          getSandbox: () => create(SandboxSchema, { sandboxId: 'floor' }),
        }),
    }),
  );
  server.on('connection', (s: Socket) => s.setNoDelay(true));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = grpcClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  await client.unary('GetSandbox', { sandboxId: 'floor' });
  const samples = await timeSequential(() => client.unary('GetSandbox', { sandboxId: 'floor' }), n);
  client.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return samples;
}

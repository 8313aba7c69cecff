/**
 * Registry images on the local backend: the first create of an uncached ~50 MiB image (pull +
 * verify + unpack + start) beside `skopeo copy` + `umoci unpack` of the same image (the floor:
 * well-kept tools doing the same transfer and unpack), and create → RUNNING from the cache beside
 * the built-in `paddock/base`, interleaved so both share the machine's load.
 *
 *   node --conditions=@paddock/source --import tsx bench/images.ts
 *
 * Env: BENCH_IMAGE_ROUNDS (default 5), BENCH_IMAGE_LAUNCHES (default 50).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { latencyStats, report, row, type BenchRow } from '@paddock/testing';
import type { BackendEvent, LaunchSpec } from '../src/backend/sandbox-backend';
import { LocalBackend } from '../src/backend/local';
import { buildImage, busyboxLayer, filler, pushImage, startRegistry } from '@paddock/testing';

const run = promisify(execFile);
const ROUNDS = Number(process.env.BENCH_IMAGE_ROUNDS ?? 5);
const LAUNCHES = Number(process.env.BENCH_IMAGE_LAUNCHES ?? 50);
const LAYER_MIB = 12;

function spec(sandboxId: string, image: string): LaunchSpec {
  return {
    sandboxId,
    organizationId: 'bench',
    runnerId: 'bench',
    image,
    command: ['sleep', 'infinity'],
    env: {},
    cpuMillis: 500,
    memoryBytes: 256 << 20,
    pidsMax: 128,
    diskBytes: 32 << 20,
    openFilesMax: 1024,
    lifetimeSeconds: 600,
    network: 'none',
    files: [],
    labels: {},
  };
}

async function main(): Promise<void> {
  const registry = await startRegistry();
  const work = mkdtempSync(join(tmpdir(), 'paddock-bench-images-'));
  const runnerId = `benchimg${process.pid}`;
  const stateDir = join('/tmp/paddock-bench', runnerId);
  const cacheDir = join(stateDir, 'images');
  const backend = new LocalBackend({ runnerId, stateDir, registry: { insecure: [registry.host], cacheDir } });
  const waiters = new Map<string, (e: BackendEvent) => void>();
  backend.onEvent((e) => {
    if (e.state === 'STATE_RUNNING' || e.state === 'STATE_FAILED') waiters.get(e.sandboxId)?.(e);
  });
  const launchTimed = async (id: string, image: string): Promise<number> => {
    const t0 = process.hrtime.bigint();
    const running = new Promise<BackendEvent>((r) => waiters.set(id, r));
    await backend.launch(spec(id, image));
    const e = await running;
    if (e.state !== 'STATE_RUNNING') throw new Error(`${id}: ${e.reason} ${e.message}`);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    await backend.reap(id, 'RUNNER_DELETED');
    return ms;
  };
  const rows: BenchRow[] = [];
  try {
    const layers = [busyboxLayer(), ...[0, 1, 2, 3].map((i) => [{ path: `data/part${i}`, content: filler(LAYER_MIB << 20) }])];
    const img = await buildImage({ layers, cmd: ['sleep', 'infinity'] });
    await pushImage(img, registry, 'bench/big:v1');
    const ref = `${registry.host}/bench/big:v1`;
    const mib = img.layers.reduce((n, l) => n + l.size, 0) / 2 ** 20;
    await backend.recover();

    const ours: number[] = [];
    const floor: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const oci = join(work, `oci-${i}`);
      const bundle = join(work, `bundle-${i}`);
      const t0 = process.hrtime.bigint();
      await run('skopeo', ['copy', '--quiet', '--src-tls-verify=false', `docker://${ref}`, `oci:${oci}:v1`]);
      await run('umoci', ['unpack', '--image', `${oci}:v1`, bundle]);
      floor.push(Number(process.hrtime.bigint() - t0) / 1e6);
      rmSync(oci, { recursive: true, force: true });
      rmSync(bundle, { recursive: true, force: true });
      // Uncached: the previous round's copy is removed first.
      for (const sub of ['images', 'blobs']) {
        const dir = join(cacheDir, sub);
        if (existsSync(dir)) for (const name of readdirSync(dir)) rmSync(join(dir, name), { recursive: true, force: true });
      }
      ours.push(await launchTimed(`uncached-${i}`, ref));
    }
    const o = latencyStats(ours);
    const f = latencyStats(floor);
    rows.push(row(`first create of an uncached ${mib.toFixed(0)} MiB image (pull + verify + unpack) → RUNNING p50, ${ROUNDS} rounds`, 'ms', [o.p50], { id: 'uncached-image-create-p50', floor: { name: 'skopeo copy + umoci unpack of the same image p50', median: f.p50 }, target: '≤ 1.5× floor', note: `ours min ${o.min.toFixed(0)}, floor min ${f.min.toFixed(0)}` }));

    await launchTimed('warm', ref);
    const cached: number[] = [];
    const base: number[] = [];
    for (let i = 0; i < LAUNCHES; i++) {
      cached.push(await launchTimed(`cached-${i}`, ref));
      base.push(await launchTimed(`base-${i}`, 'paddock/base'));
    }
    const c = latencyStats(cached);
    const b = latencyStats(base);
    rows.push(row(`create → RUNNING p50 from a cached registry image, ${LAUNCHES} sequential`, 'ms', [c.p50], { id: 'cached-image-create-p50', floor: { name: 'paddock/base p50, interleaved', median: b.p50 }, target: 'within noise (≈ 1×) plus one manifest request', note: `p99 ${c.p99.toFixed(2)} vs ${b.p99.toFixed(2)}` }));
    rmSync(img.layoutDir, { recursive: true, force: true });
  } finally {
    for (const r of await backend.recover()) await backend.reap(r.sandboxId, 'RUNNER_DELETED');
    await backend.close();
    await new Promise((r) => setTimeout(r, 500));
    backend.cgroupTree().removeRunnerTree();
    rmSync(stateDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
    await registry.stop();
  }
  report('runner-local-images', rows);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

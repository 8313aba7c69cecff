/**
 * Pause/resume latency and file-system snapshot throughput on the local backend, each beside a
 * floor measured in the same run on the same machine:
 * - pause and resume (runner → supervisor → cgroup freezer → event) beside a bare freezer
 *   write-and-wait on a cgroup holding one process;
 * - snapshot (frozen sandbox, GNU tar into the store) and restore (launch with the archive to
 *   RUNNING) in MiB/s, beside a bare `tar -c` / `tar -x` of the same data.
 *
 *   node --conditions=@paddock/source --import tsx bench/pause-snapshot.ts
 *
 * Env: BENCH_PAUSES (default 50), BENCH_SNAPSHOTS (5), BENCH_SNAPSHOT_MIB (100).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { report, row, type BenchRow } from '@paddock/testing';
import type { BackendEvent, LaunchSpec } from '../src/backend/sandbox-backend';
import { LocalBackend } from '../src/backend/local';
import { RunnerSnapshots } from '../src/service/snapshots';
import { LocalSnapshotStore } from '../src/snapshots/local-store';

const PAUSES = Number(process.env.BENCH_PAUSES ?? 50);
const SNAPSHOTS = Number(process.env.BENCH_SNAPSHOTS ?? 5);
const SNAPSHOT_MIB = Number(process.env.BENCH_SNAPSHOT_MIB ?? 100);
const MIB = 1024 * 1024;
const ms = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e6;

function spec(sandboxId: string, over: Partial<LaunchSpec> = {}): LaunchSpec {
  return {
    sandboxId,
    organizationId: 'bench',
    runnerId: 'bench',
    image: '',
    command: ['/bin/sh', '-c', 'i=0; while :; do i=$((i+1)); done'],
    env: {},
    cpuMillis: 500,
    memoryBytes: (SNAPSHOT_MIB + 256) * MIB,
    pidsMax: 128,
    diskBytes: (SNAPSHOT_MIB + 64) * MIB,
    openFilesMax: 1024,
    lifetimeSeconds: 600,
    network: 'none',
    files: [],
    labels: {},
    ...over,
  };
}

/** The floor of a pause: FROZEN then THAWED written to a freezer cgroup holding one sleeping process. */
async function freezerFloor(runs: number): Promise<{ freeze: number[]; thaw: number[] }> {
  const dir = join('/sys/fs/cgroup/freezer', 'paddock-bench-floor');
  mkdirSync(dir, { recursive: true });
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 50));
  writeFileSync(join(dir, 'cgroup.procs'), String(child.pid));
  const wait = (want: string): void => {
    while (readFileSync(join(dir, 'freezer.state'), 'utf8').trim() !== want) writeFileSync(join(dir, 'freezer.state'), want);
  };
  const freeze: number[] = [];
  const thaw: number[] = [];
  try {
    for (let i = 0; i < runs + 5; i++) {
      let t = process.hrtime.bigint();
      writeFileSync(join(dir, 'freezer.state'), 'FROZEN');
      wait('FROZEN');
      if (i >= 5) freeze.push(ms(t));
      t = process.hrtime.bigint();
      writeFileSync(join(dir, 'freezer.state'), 'THAWED');
      wait('THAWED');
      if (i >= 5) thaw.push(ms(t));
    }
  } finally {
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    rmdirSync(dir);
  }
  return { freeze, thaw };
}

async function main(): Promise<void> {
  const runnerId = `bench-pause-${process.pid}`;
  const stateDir = join('/tmp/paddock-bench', runnerId);
  const storeDir = mkdtempSync(join(tmpdir(), 'paddock-bench-snapshots-'));
  const floorDir = mkdtempSync(join('/dev/shm', 'paddock-bench-tar-'));
  const backend = new LocalBackend({ runnerId, stateDir });
  const events: BackendEvent[] = [];
  backend.onEvent((e) => events.push(e));
  const running = async (id: string): Promise<void> => {
    for (;;) {
      const e = events.find((x) => x.sandboxId === id && ['STATE_RUNNING', 'STATE_FAILED', 'STATE_COMPLETED'].includes(x.state));
      if (e) {
        if (e.state !== 'STATE_RUNNING') throw new Error(`${id}: ${e.state} ${e.message ?? ''}`);
        return;
      }
      await new Promise((r) => setTimeout(r, 1));
    }
  };
  const rows: BenchRow[] = [];
  try {
    // --- pause and resume of a busy sandbox
    await backend.launch(spec('busy'));
    await running('busy');
    const pause: number[] = [];
    const resume: number[] = [];
    for (let i = 0; i < PAUSES + 5; i++) {
      let t = process.hrtime.bigint();
      await backend.pause('busy', 'PAUSED_BY_USER');
      if (i >= 5) pause.push(ms(t));
      t = process.hrtime.bigint();
      await backend.resume('busy');
      if (i >= 5) resume.push(ms(t));
    }
    const floor = await freezerFloor(PAUSES);
    const pauseFloor = row('freezer write + wait FROZEN', 'ms', floor.freeze);
    const thawFloor = row('freezer write + wait THAWED', 'ms', floor.thaw);
    rows.push(row('pause latency (busy sandbox, p50)', 'ms', pause, { floor: { name: 'bare freezer FROZEN', median: pauseFloor.median }, target: '< 20 ms' }));
    rows.push(row('resume latency (busy sandbox, p50)', 'ms', resume, { floor: { name: 'bare freezer THAWED', median: thawFloor.median }, target: '< 20 ms' }));
    await backend.stop('busy', 0, 'STOPPED_BY_USER');

    // --- snapshot and restore of SNAPSHOT_MIB of random data plus small files
    await backend.launch(spec('source', { command: ['sleep', '600'] }));
    await running('source');
    const fill = await backend.exec('source', {
      argv: ['/bin/sh', '-c', `head -c ${SNAPSHOT_MIB * MIB} /dev/urandom > /workspace/big.bin && mkdir -p /workspace/src && for i in $(seq 1 200); do echo "file $i" > /workspace/src/f$i.txt; done`],
      timeoutMs: 300_000,
    });
    if (fill.exitCode !== 0) throw new Error(`fill failed: ${fill.stderr.toString()}`);
    const disk = join(stateDir, 'sandboxes', 'source', 'disk');
    const store = new LocalSnapshotStore(storeDir);
    const snaps = new RunnerSnapshots(backend, store);
    const snapMibs: number[] = [];
    const frozen: number[] = [];
    const tarCMibs: number[] = [];
    const restoreMibs: number[] = [];
    const tarXMibs: number[] = [];
    let sizeMib = 0;
    for (let i = 0; i < SNAPSHOTS; i++) {
      let t = process.hrtime.bigint();
      const r = await snaps.capture({ sandboxId: 'source', organizationId: 'bench', snapshotId: `s${i}` }, { containers: [{ name: 'main' }] }, 'source');
      const took = ms(t);
      sizeMib = r.sizeBytes / MIB;
      snapMibs.push(sizeMib / (took / 1000));
      frozen.push(r.frozenMs);
      // Floor: bare tar of the same disk into the same store directory.
      const bare = join(storeDir, `bare-${i}.tar`);
      t = process.hrtime.bigint();
      const c = spawnSync('tar', ['--numeric-owner', '--sparse', '-cf', bare, '-C', disk, '.']);
      const tarTook = ms(t);
      if (c.status !== 0) throw new Error(`bare tar -c failed: ${c.stderr.toString()}`);
      tarCMibs.push(statSync(bare).size / MIB / (tarTook / 1000));

      // Restore: launch with the archive until RUNNING (extraction happens before the start).
      const archive = await store.localPath('bench', `s${i}`);
      t = process.hrtime.bigint();
      await backend.launch(spec(`restored-${i}`, { command: ['sleep', '600'], restoreArchive: archive }));
      await running(`restored-${i}`);
      restoreMibs.push(sizeMib / (ms(t) / 1000));
      await backend.stop(`restored-${i}`, 0, 'STOPPED_BY_USER');
      // Floor: bare tar -x of the same archive onto tmpfs.
      const target = join(floorDir, String(i));
      mkdirSync(target);
      t = process.hrtime.bigint();
      const x = spawnSync('tar', ['-xf', bare, '-C', target]);
      const xTook = ms(t);
      if (x.status !== 0) throw new Error(`bare tar -x failed: ${x.stderr.toString()}`);
      tarXMibs.push(sizeMib / (xTook / 1000));
      rmSync(target, { recursive: true, force: true });
      rmSync(bare, { force: true });
      await store.delete('bench', `s${i}`);
    }
    const tarC = row('bare tar -c', 'MiB/s', tarCMibs);
    const tarX = row('bare tar -x onto tmpfs', 'MiB/s', tarXMibs);
    rows.push(row(`snapshot throughput (${Math.round(sizeMib)} MiB disk, frozen)`, 'MiB/s', snapMibs, { id: 'snapshot-throughput', floor: { name: 'bare tar -c', median: tarC.median }, target: '≥ 0.50x' }));
    rows.push(row(`restore throughput (${Math.round(sizeMib)} MiB, launch to RUNNING)`, 'MiB/s', restoreMibs, { id: 'restore-throughput', floor: { name: 'bare tar -x onto tmpfs', median: tarX.median }, target: '≥ 0.30x' }));
    rows.push(row('sandbox frozen during a snapshot', 'ms', frozen, { note: `${Math.round(sizeMib)} MiB disk; the sandbox runs again right after` }));
    await backend.stop('source', 0, 'STOPPED_BY_USER');
  } finally {
    for (const r of await backend.recover().catch(() => [])) await backend.reap(r.sandboxId, 'RUNNER_DELETED');
    await backend.close();
    rmSync(stateDir, { recursive: true, force: true });
    rmSync(storeDir, { recursive: true, force: true });
    rmSync(floorDir, { recursive: true, force: true });
  }
  report('runner-pause-snapshot', rows);
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '@paddock/testing';
import { runnerTreeName } from '../../src/backend/local/cgroups';
import { cgroupValue, destroyBackend, launchRunning, makeBackend, spec, type TestBackend } from './helpers';

const procsOf = (t: TestBackend, id: string): number[] =>
  readFileSync(join('/sys/fs/cgroup/pids/paddock', runnerTreeName(t.runnerId, t.stateDir), id, 'cgroup.procs'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map(Number);

/** Warm slots (cgroup v1): launchers already inside fresh cgroups, handed to the next launches. */
describe('local backend: warm slots', () => {
  let t: TestBackend;
  beforeAll(async () => {
    t = makeBackend({ warmSlots: 2 });
    await t.backend.recover();
  });
  afterAll(async () => {
    const left = await destroyBackend(t);
    expect(left).toEqual({ leftoverProcesses: [], leftoverCgroups: [] });
    // Nothing of the pool is left either: close() removed the slots' cgroups.
    expect(t.backend.cgroupTree().listWarm()).toEqual([]);
  });

  it('keeps two slots ready, each holding one parked launcher and no sandbox', async () => {
    const cg = t.backend.cgroupTree();
    await waitFor(() => cg.listWarm().length === 2 && cg.listWarm().every((id) => procsOf(t, id).length === 1), { timeoutMs: 15_000, what: 'two warm slots' });
    expect(cg.listSandboxes()).toEqual([]);
  });

  it('a launch takes a slot over: its launcher becomes the sandbox, with the sandbox\'s limits; the pool refills', async () => {
    const cg = t.backend.cgroupTree();
    const before = new Set(cg.listWarm());
    await launchRunning(t, spec('from-slot', { pidsMax: 77, memoryBytes: 96 * 1024 * 1024, cpuMillis: 300 }));
    // One of the two slots is now the sandbox's cgroup (renamed), so one slot name is gone.
    expect(cg.listWarm().filter((id) => before.has(id)).length).toBe(1);
    expect(cgroupValue(t, 'from-slot', 'pids', 'pids.max')).toBe('77');
    expect(cgroupValue(t, 'from-slot', 'memory', 'memory.limit_in_bytes')).toBe(String(96 * 1024 * 1024));
    expect(cgroupValue(t, 'from-slot', 'cpu', 'cpu.cfs_quota_us')).toBe('30000');
    const r = await t.backend.exec('from-slot', { argv: ['sh', '-c', 'id -u; echo ok'] });
    expect(r.stdout.toString()).toMatch(/^\d+\nok\n$/);
    expect(r.stdout.toString().startsWith('0\n')).toBe(false);
    await waitFor(() => cg.listWarm().length === 2, { timeoutMs: 15_000, what: 'pool refilled' });
    await t.backend.reap('from-slot', 'RUNNER_DELETED');
    expect(cg.listSandboxes()).toEqual([]);
  });

  it('a burst larger than the pool launches every sandbox (slots first, then the ordinary path)', async () => {
    const ids = Array.from({ length: 6 }, (_, i) => `burst-${i}`);
    await Promise.all(ids.map((id) => launchRunning(t, spec(id))));
    for (const id of ids) expect((await t.backend.exec(id, { argv: ['echo', id] })).stdout.toString()).toBe(`${id}\n`);
    for (const id of ids) await t.backend.reap(id, 'RUNNER_DELETED');
    expect(t.backend.cgroupTree().listSandboxes()).toEqual([]);
  });
});

import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WARM_GROUP_PREFIX, type RunnerCgroups } from './cgroups';
import { readPid } from './pids';
import { request } from './socket-io';
import type { SupervisorZygote } from './supervisor-zygote';

export interface WarmSlot {
  /** The slot's cgroup name under the runner's tree. */
  id: string;
  /** Its state directory: `slot.json` for the supervisor, then `pid` and `slot.sock` from it. */
  dir: string;
}

/**
 * Supervisors forked ahead of demand whose launcher child has already moved itself into a fresh
 * set of cgroups. On cgroup v1 that move waits for an RCU grace period (about 12 ms on the
 * 2-core machines this was measured on, the largest single cost of a launch); a warm slot pays it
 * before anyone asks for a sandbox. A launch renames the slot's cgroups to the sandbox id, writes
 * the limits and hands the supervisor its plan over `slot.sock`. Unassigned slots die with the
 * zygote (PDEATHSIG) and are swept by `dispose()` or the next runner's recovery.
 */
export class WarmSlots {
  private readonly slots: WarmSlot[] = [];
  private readonly root: string;

  constructor(
    private readonly cg: RunnerCgroups,
    private readonly zygote: SupervisorZygote,
    stateDir: string,
    private readonly target: number,
  ) {
    this.root = join(stateDir, 'warm');
  }

  /** Tops the pool up to its target (a few mkdirs and one line to the zygote per slot). */
  refill(): void {
    if (this.cg.mode !== 'v1') return;
    while (this.slots.length < this.target) {
      const id = `${WARM_GROUP_PREFIX}${randomUUID().slice(0, 8)}`;
      const dir = join(this.root, id);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      this.cg.makeDirs(id);
      writeFileSync(join(dir, 'slot.json'), JSON.stringify({ dir, cgroupProcs: this.cg.procsFiles(id) }), { mode: 0o600 });
      this.zygote.start(`warm ${join(dir, 'slot.json')}`);
      this.slots.push({ id, dir });
    }
  }

  /** A slot whose launcher is in place (its supervisor listens), removed from the pool; else undefined. */
  take(): WarmSlot | undefined {
    const i = this.slots.findIndex((s) => existsSync(join(s.dir, 'slot.sock')));
    if (i < 0) return undefined;
    return this.slots.splice(i, 1)[0];
  }

  /** Hands the slot's supervisor its plan; false if it is gone (the caller then starts the plan itself). */
  async handOff(slot: WarmSlot, planPath: string): Promise<boolean> {
    try {
      const reply = await request(join(slot.dir, 'slot.sock'), { plan: planPath });
      return reply.ok === true;
    } catch {
      return false;
    } finally {
      rmSync(slot.dir, { recursive: true, force: true });
    }
  }

  /** Cgroup names of the pool's slots (not sandboxes: recovery must leave them alone). */
  ids(): Set<string> {
    return new Set(this.slots.map((s) => s.id));
  }

  /** The pool's supervisor pids (they sit in the runner's supervisors cgroup like the others). */
  pids(): number[] {
    return this.slots.map((s) => readPid(join(s.dir, 'pid'))).filter((p): p is number => p !== undefined);
  }

  /** State directories of slots from an earlier runner process, which died with its zygote. */
  removeStale(): void {
    if (!existsSync(this.root)) return;
    const ours = new Set(this.slots.map((s) => s.id));
    for (const name of readdirSync(this.root)) {
      if (!ours.has(name)) rmSync(join(this.root, name), { recursive: true, force: true });
    }
  }

  /** After the zygote is gone: kills the parked launchers and removes the slots' cgroups and state. */
  async dispose(): Promise<void> {
    for (const s of this.slots.splice(0)) {
      await this.cg.killAndRemove(s.id);
      rmSync(s.dir, { recursive: true, force: true });
    }
  }
}

import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import {
  isTerminalSandboxState,
  SandboxSpecSchema,
  WARM_POOL_LABEL,
  type RunnerCapabilities,
  type RunnerCapacity,
  type SandboxStateReason,
  type WarmPool,
  type WarmPoolStatus,
} from '@paddock/contracts';
import type {
  BackendEvent,
  ExecProcess,
  ExecRequest,
  ExecResult,
  ExecStreamRequest,
  FileStat,
  LaunchSpec,
  LogChunk,
  LogRequest,
  RecoveredSandbox,
  SandboxBackend,
} from '../backend/sandbox-backend';
import { warmPoolKey } from '@paddock/policy';
import type { PolicyHolder } from '../policy/policy-holder';
import { effectiveFieldsOf, reservationOf, toLaunchSpec, type PersistedSandboxMeta, type SandboxHostCaps } from './launch-spec';
import { canonicalJson } from './sandbox-record';
import type { Clock, RunnerIdentity, RunnerLogger } from './sandbox-service';
import type { WarmTie, WarmTieStore } from '../backend/warm-tie';
import { WarmTieJournal } from './warm-ties';

/** What warm sandboxes hold of the runner's capacity right now (their requests, and how many). */
export interface WarmHold {
  cpuMillis: number;
  memoryBytes: number;
  sandboxes: number;
}

export interface WarmPoolDeps {
  inner: SandboxBackend;
  policy: PolicyHolder;
  identity: RunnerIdentity;
  caps: SandboxHostCaps;
  clock: Clock;
  log: RunnerLogger;
  /** Warm sandbox ids; tests may pin them. */
  newId?: (pool: string) => string;
  /**
   * The journal of each take's tie to its create (in the runner's state dir), so a restarted runner
   * adopts taken sandboxes under their creates' ids, for a backend without `warmTies` of its own.
   * Neither: a restart reaps them with the idle ones.
   */
  tieJournal?: string;
}

interface Member {
  id: string;
  ready: boolean;
  /** Epoch ms when the backend itself ends the warm sandbox (its launch lifetime). */
  deadlineMs: number;
  reservation: { cpuMillis: number; memoryBytes: number };
}

interface PoolState {
  def: WarmPool;
  /** The template resolved against the current policy; undefined when refused (see `error`). */
  launch?: LaunchSpec;
  key?: string;
  /** The template's `warmPoolKey`, reported so the gateway can prefer this runner for a match. */
  preferenceKey?: string;
  error?: string;
  members: Map<string, Member>;
  /** Consecutive warm sandboxes that failed before becoming ready: refills back off on them. */
  failures: number;
  retryAtMs: number;
}

interface Taken {
  warmId: string;
  /** The create's environment (a superset of the template's) and its own hostname variable. */
  env: Record<string, string>;
}

/**
 * Fields of a launch that a warm sandbox was not started with and receives when it is taken (or
 * that the runner, not the backend, enforces for it: the lifetime). Every other field, present or
 * future, must be equal for a create to match a pool, so a field added to launches later can never
 * be dropped by handing out a sandbox started without it.
 */
const TAKE_TIME_FIELDS = new Set(['sandboxId', 'env', 'files', 'labels', 'lifetimeSeconds']);

/** Everything of a launch that a warm sandbox must already have been started with. */
export function warmMatchKey(spec: LaunchSpec): string {
  return canonicalJson(Object.fromEntries(Object.entries(spec).filter(([k]) => !TAKE_TIME_FIELDS.has(k))));
}

/**
 * What the prime execs: a name under `/proc/self/fd` (a directory of descriptor numbers in every
 * sandbox), so nothing is found to run; the exec daemon warms itself up with the same path.
 */
const PRIME_EXE = '/proc/self/fd/paddock-warm-up';

/** Back-off after a warm sandbox fails to start: 1 s doubling to a minute. */
const backoffMs = (failures: number): number => Math.min(60_000, 1_000 * 2 ** Math.max(0, failures - 1));
/**
 * A warm sandbox is launched with this many times its template's lifetime, and replaced once less
 * than one template lifetime (plus a maintenance period) is left: so an idle one can always grant
 * a create of that template its whole lifetime from the moment it is taken, which the runner's own
 * timer then enforces (the backend's longer deadline stays as the backstop).
 */
const WARM_LIFETIME_FACTOR = 2;
const MAINTENANCE_MS = 30_000;
/**
 * Refills wait for takes to pause this long: a replacement's launch (namespaces, cgroups, bwrap)
 * costs the kernel CPU that a burst of creates being served needs.
 */
const REFILL_QUIET_MS = 200;
/** ...but no longer than this after the first take they wait for, so a steady stream still refills. */
const REFILL_MAX_WAIT_MS = 2_000;

/**
 * The runner's warm pools, as a backend in front of the real one.
 *
 * For each pool it keeps `size` sandboxes launched from the pool's template (resolved against the
 * runner's policy like any create) and idle: their main process is the image's idle default and
 * the one exec that reached them was the prime's, which runs nothing, so they have never run user
 * code. A launch whose spec matches a template (`warmMatchKey`: image, command, resources, runtime
 * class, network posture and every other field a sandbox is started with) and whose environment
 * holds the template's takes one of them instead of starting cold; a miss is an ordinary cold launch.
 *
 * A taken sandbox becomes the create's: it is known by the create's id from then on (every call is
 * translated to the warm id underneath and every event back), its files are written before it is
 * reported RUNNING, every command runs with the create's environment (and `HOSTNAME` = its id), and
 * the runner's own lifetime timer ends it at the create's deadline (a take needs at least that much
 * of the warm sandbox's backend lifetime left, so the backend's backstop never comes first).
 * The kernel hostname inside stays the warm sandbox's: a UTS namespace cannot be renamed from outside.
 *
 * Taking is synchronous (claimed before the first await), so a warm sandbox is never handed out
 * twice. Pools refill in the background after each take, replace a warm sandbox that dies, and drain
 * when shrunk, removed or re-templated. Warm sandboxes hold their requests of the runner's capacity
 * (`held()`), and a pool only fills into capacity that is free.
 */
export class WarmPoolBackend implements SandboxBackend {
  readonly kind: SandboxBackend['kind'];
  private readonly pools = new Map<string, PoolState>();
  /** Warm id → pool name, for every member of every pool (idle, starting, or being drained). */
  private readonly memberPool = new Map<string, string>();
  private readonly draining = new Set<string>();
  private readonly taken = new Map<string, Taken>();
  /** Members claimed by a create (its sandbox id) that has not launched yet: see `reserve`. */
  private readonly reserved = new Map<string, { pool: PoolState; member: Member }>();
  private readonly warmToSandbox = new Map<string, string>();
  private readonly listeners: ((e: BackendEvent) => void)[] = [];
  private capacityOf: () => RunnerCapacity = () => ({ cpuMillisFree: 0, memoryBytesFree: 0, sandboxesRunning: 0, sandboxesMax: 0 });
  private reconciling = false;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private refillTimer: NodeJS.Timeout | undefined;
  /** Epoch ms of the first take the pending refill waits behind. */
  private refillSinceMs: number | undefined;
  /** Epoch ms of the last take, or call on a taken sandbox, while a refill is pending. */
  private lastServedMs = 0;
  private readonly ties: WarmTieStore | undefined;
  /** Launch specs' match keys, computed once per create (its capacity check and its launch both look). */
  private readonly matchKeys = new WeakMap<LaunchSpec, string>();
  private readonly maintenance: NodeJS.Timeout;
  private closed = false;
  private readonly d: WarmPoolDeps;
  /** Launches that went to the backend cold (a miss, or no pool at all). */
  coldLaunches = 0;
  /** Launches served from a pool. */
  warmTakes = 0;

  // The backend's optional operations, present exactly when the inner backend has them: callers
  // read their presence as a capability (pause, snapshots, service relays, usage, container states).
  readonly connectPort?: SandboxBackend['connectPort'];
  readonly containerStatuses?: SandboxBackend['containerStatuses'];
  readonly pause?: SandboxBackend['pause'];
  readonly resume?: SandboxBackend['resume'];
  readonly snapshotDisk?: SandboxBackend['snapshotDisk'];
  readonly usage?: SandboxBackend['usage'];
  readonly launchViolations?: SandboxBackend['launchViolations'];

  constructor(deps: WarmPoolDeps) {
    this.d = deps;
    this.kind = deps.inner.kind;
    this.ties = deps.inner.warmTies ?? (deps.tieJournal ? new WarmTieJournal(deps.tieJournal) : undefined);
    const inner = deps.inner;
    const connectPort = inner.connectPort?.bind(inner);
    if (connectPort) this.connectPort = (id, port) => connectPort(this.real(id), port);
    const containerStatuses = inner.containerStatuses?.bind(inner);
    if (containerStatuses) this.containerStatuses = (id) => containerStatuses(this.real(id));
    const pause = inner.pause?.bind(inner);
    if (pause) this.pause = (id, reason) => pause(this.real(id), reason);
    const resume = inner.resume?.bind(inner);
    if (resume) this.resume = (id) => resume(this.real(id));
    const snapshotDisk = inner.snapshotDisk?.bind(inner);
    if (snapshotDisk) this.snapshotDisk = (id, out) => snapshotDisk(this.real(id), out);
    const usage = inner.usage?.bind(inner);
    if (usage) this.usage = (id) => usage(this.real(id));
    const launchViolations = inner.launchViolations?.bind(inner);
    if (launchViolations) this.launchViolations = launchViolations;
    deps.inner.onEvent((e) => this.onInnerEvent(e));
    this.maintenance = setInterval(() => this.recycleAging(), MAINTENANCE_MS);
    this.maintenance.unref();
  }

  /** The service's capacity view (which already subtracts `held()`), read before each fill. */
  bindCapacity(capacity: () => RunnerCapacity): void {
    this.capacityOf = capacity;
  }

  // -------------------------------------------------------------------------------------------
  // pools
  // -------------------------------------------------------------------------------------------

  /**
   * Applies the runner's pool list (from its config file), resolving each template against the
   * policy in force now. A removed pool, or one whose resolved template changed, is drained.
   */
  configure(defs: WarmPool[]): void {
    const wanted = new Map(defs.map((p) => [p.name, p]));
    for (const [name, pool] of this.pools) {
      if (!wanted.has(name)) {
        this.drain(pool, pool.members.size);
        this.pools.delete(name);
      }
    }
    for (const def of defs) {
      const resolved = this.resolveTemplate(def);
      const prev = this.pools.get(def.name);
      const pool: PoolState = prev ?? { def, members: new Map(), failures: 0, retryAtMs: 0 };
      if (prev && prev.key !== resolved.key) {
        // Sandboxes started from another template (or under another policy) no longer match it.
        this.drain(prev, prev.members.size);
        pool.failures = 0;
        pool.retryAtMs = 0;
      }
      pool.def = def;
      pool.launch = resolved.launch;
      pool.key = resolved.key;
      pool.preferenceKey = resolved.preferenceKey;
      pool.error = resolved.error;
      this.pools.set(def.name, pool);
    }
    this.kick();
  }

  /** Each pool's size and ready count, for the heartbeat. */
  status(): WarmPoolStatus[] {
    return [...this.pools.values()].map((p) => ({
      name: p.def.name,
      size: p.def.size,
      ready: [...p.members.values()].filter((m) => m.ready).length,
      ...(p.error ? { error: p.error } : {}),
      ...(p.preferenceKey ? { key: p.preferenceKey } : {}),
    }));
  }

  /** Capacity held by warm sandboxes (starting or ready, and those being drained until they end). */
  held(): WarmHold {
    const hold: WarmHold = { cpuMillis: 0, memoryBytes: 0, sandboxes: 0 };
    for (const pool of this.pools.values()) {
      for (const m of pool.members.values()) add(hold, m);
    }
    for (const m of this.drainingMembers.values()) add(hold, m);
    return hold;
  }

  /**
   * Claims an idle member for `spec` now, before the create's first await, so that its launch is
   * served warm: a check that only looked would let two creates of the same tick both count on
   * one member, and the second would then launch cold with the capacity check skipped (the pool
   * held it for the first). True when a member is claimed (its capacity moves from the pool's
   * hold to the create's own allocation); `release` gives it back if the launch never comes.
   */
  reserve(spec: LaunchSpec): boolean {
    if (this.reserved.has(spec.sandboxId)) return true;
    const hit = this.find(spec);
    if (!hit) return false;
    hit.pool.members.delete(hit.member.id);
    this.reserved.set(spec.sandboxId, hit);
    return true;
  }

  /** Returns a reservation whose launch did not happen (a failed admission step) to its pool. */
  release(sandboxId: string): void {
    const r = this.reserved.get(sandboxId);
    if (!r) return;
    this.reserved.delete(sandboxId);
    const { pool, member } = r;
    // Only into the same pool still holding the member: a drained, resized or ended one is not
    // handed back (the reconcile replaces what is missing).
    if (this.holds(pool, member)) pool.members.set(member.id, member);
    else this.retire(member);
    this.kick();
  }

  /** Whether `member` is alive and its pool still the one in force (not removed, resized away or changed). */
  private holds(pool: PoolState, member: Member): boolean {
    return this.pools.get(pool.def.name) === pool && this.memberPool.get(member.id) === pool.def.name && !this.draining.has(member.id);
  }

  /** Stops a member its pool no longer wants (drained, aged out, or a claim given back too late); a no-op once it ended. */
  private retire(member: Member, reason: 'STOPPED_BY_USER' | 'LIFETIME_EXPIRED' = 'STOPPED_BY_USER'): void {
    if (!this.memberPool.has(member.id) || this.draining.has(member.id)) return;
    this.drainingMembers.set(member.id, member);
    this.draining.add(member.id);
    this.d.inner.stop(member.id, 0, reason).catch((e: unknown) => {
      this.d.log.warn('Failed to stop a drained warm sandbox', { warmId: member.id, error: String(e) });
    });
  }

  /** The warm id under a taken sandbox's id (undefined when it launched cold). */
  warmIdOf(sandboxId: string): string | undefined {
    return this.taken.get(sandboxId)?.warmId;
  }

  /** Ids of the idle members of a pool (ready or still starting). */
  memberIds(pool: string): string[] {
    return [...(this.pools.get(pool)?.members.keys() ?? [])];
  }

  private readonly drainingMembers = new Map<string, Member>();

  private resolveTemplate(def: WarmPool): { launch?: LaunchSpec; key?: string; preferenceKey?: string; error?: string } {
    const decision = this.d.policy.resolve(def.template, this.d.inner.capabilities());
    if (!decision.ok) {
      return { error: `template refused: ${decision.violations.map((v) => `${v.field} (${v.rule}): ${v.description}`).join('; ')}` };
    }
    const typed = SandboxSpecSchema.safeParse(def.template);
    if (!typed.success) return { error: `template invalid: ${typed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}` };
    const { resolved } = decision;
    const reservation = reservationOf(resolved);
    const meta: PersistedSandboxMeta = {
      v: 1,
      organizationId: this.d.identity.organizationId,
      spec: typed.data,
      labels: {},
      effective: effectiveFieldsOf(resolved),
      requestFingerprint: '',
      createTime: new Date(0).toISOString(),
      cpuMillis: reservation.cpuMillis,
      memoryBytes: reservation.memoryBytes,
    };
    const launch = toLaunchSpec({
      sandboxId: `warm-${def.name}`,
      organizationId: this.d.identity.organizationId,
      runnerId: this.d.identity.runnerId,
      spec: typed.data,
      resolved,
      caps: this.d.caps,
      meta,
    });
    const refused = this.d.inner.launchViolations?.(resolved, launch) ?? [];
    if (refused.length) return { error: `template refused: ${refused.map((v) => `${v.field} (${v.rule}): ${v.description}`).join('; ')}` };
    return { launch, key: warmMatchKey(launch), preferenceKey: warmPoolKey(resolved) };
  }

  /** Stops `n` idle members of a pool (still-starting ones first: nobody is about to use them). */
  private drain(pool: PoolState, n: number): void {
    const order = [...pool.members.values()].sort((a, b) => Number(a.ready) - Number(b.ready));
    for (const m of order.slice(0, n)) {
      pool.members.delete(m.id);
      this.retire(m);
    }
  }

  /**
   * Runs a reconcile soon; calls while one runs make it go round once more. While a burst of takes
   * is being served (a refill pending behind it), nothing else starts one: that refill does it all.
   */
  private kick(): void {
    if (this.closed || this.refillTimer) return;
    if (this.reconciling) {
      this.again = true;
      return;
    }
    setImmediate(() => void this.reconcile());
  }

  /**
   * Refills once takes pause, for every take before it: during a burst, launching replacements
   * would compete for the CPU with the creates the pool serves, and with their first commands,
   * which follow the takes (so a call on a taken sandbox pushes the refill back as a take does:
   * `noteServed`). A stream that never pauses still refills, `REFILL_MAX_WAIT_MS` after its first take.
   */
  private refillSoon(): void {
    const now = this.d.clock.now().getTime();
    this.refillSinceMs ??= now;
    this.lastServedMs = now;
    // A pending timer looks at `lastServedMs` when it fires (cheaper than re-arming on every take).
    if (!this.refillTimer) this.armRefill(REFILL_QUIET_MS);
  }

  private armRefill(ms: number): void {
    this.refillTimer = setTimeout(() => {
      const now = this.d.clock.now().getTime();
      const due = Math.min(this.lastServedMs + REFILL_QUIET_MS, (this.refillSinceMs ?? now) + REFILL_MAX_WAIT_MS);
      if (due > now) return this.armRefill(due - now);
      this.refillTimer = undefined;
      this.refillSinceMs = undefined;
      this.kick();
    }, ms);
    this.refillTimer.unref();
  }

  /** A call on a taken sandbox while a refill waits: more of the burst it waits behind. */
  private noteServed(sandboxId: string): void {
    if (this.refillTimer && this.taken.has(sandboxId)) this.lastServedMs = this.d.clock.now().getTime();
  }

  private async reconcile(): Promise<void> {
    if (this.reconciling || this.closed) return;
    this.reconciling = true;
    try {
      do {
        this.again = false;
        for (const pool of this.pools.values()) await this.reconcilePool(pool);
      } while (this.again && !this.closed);
    } finally {
      this.reconciling = false;
    }
  }

  private async reconcilePool(pool: PoolState): Promise<void> {
    const excess = pool.members.size - (pool.launch ? pool.def.size : 0);
    if (excess > 0) this.drain(pool, excess);
    const template = pool.launch;
    if (!template) return;
    while (!this.closed && pool.members.size < pool.def.size && this.pools.get(pool.def.name) === pool && pool.launch === template) {
      const now = this.d.clock.now().getTime();
      if (pool.retryAtMs > now) {
        this.retryLater(pool.retryAtMs - now);
        return;
      }
      const reservation = { cpuMillis: template.cpuRequestMillis ?? template.cpuMillis, memoryBytes: template.memoryRequestBytes ?? template.memoryBytes };
      const full = this.atCapacity(reservation);
      if (full) {
        pool.error = `runner at capacity: ${full}`;
        return;
      }
      if (pool.error?.startsWith('runner at capacity')) delete pool.error;
      const id = this.d.newId?.(pool.def.name) ?? `warm-${pool.def.name}-${randomBytes(5).toString('hex')}`;
      const lifetimeSeconds = template.lifetimeSeconds * WARM_LIFETIME_FACTOR;
      const member: Member = { id, ready: false, deadlineMs: now + lifetimeSeconds * 1000, reservation };
      pool.members.set(id, member);
      this.memberPool.set(id, pool.def.name);
      try {
        await this.d.inner.launch({ ...template, sandboxId: id, lifetimeSeconds, labels: { ...template.labels, [WARM_POOL_LABEL]: pool.def.name } });
        // Drained while its launch was in flight: a stop sent before the backend knew the sandbox
        // may have found nothing to stop, so it is sent again now that the launch is in place.
        if (this.draining.has(id)) await this.d.inner.stop(id, 0, 'STOPPED_BY_USER').catch(() => undefined);
      } catch (e) {
        this.memberFailed(pool, member, String(e));
      }
    }
  }

  private atCapacity(want: { cpuMillis: number; memoryBytes: number }): string | undefined {
    const free = this.capacityOf();
    const used = free.sandboxesRunning + (free.sandboxesWarm ?? 0);
    if (used >= free.sandboxesMax) return `${used}/${free.sandboxesMax} sandboxes`;
    if (want.cpuMillis > free.cpuMillisFree) return `${want.cpuMillis}m CPU wanted, ${free.cpuMillisFree}m free`;
    if (want.memoryBytes > free.memoryBytesFree) return `${want.memoryBytes} bytes of memory wanted, ${free.memoryBytesFree} free`;
    return undefined;
  }

  private retryLater(ms: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.kick();
    }, ms);
    this.timer.unref();
  }

  private memberFailed(pool: PoolState, member: Member, message: string): void {
    pool.members.delete(member.id);
    this.memberPool.delete(member.id);
    pool.failures++;
    pool.retryAtMs = this.d.clock.now().getTime() + backoffMs(pool.failures);
    pool.error = `warm sandbox failed to start: ${message}`;
    this.d.log.warn('Warm sandbox failed to start', { pool: pool.def.name, warmId: member.id, message });
  }

  /** Replaces idle members past their useful life, so a take can always grant a full lifetime. */
  private recycleAging(): void {
    const now = this.d.clock.now().getTime();
    for (const pool of this.pools.values()) {
      const lifetimeMs = (pool.launch?.lifetimeSeconds ?? 0) * 1000;
      for (const m of [...pool.members.values()]) {
        if (m.ready && m.deadlineMs - now < lifetimeMs + 2 * MAINTENANCE_MS) {
          pool.members.delete(m.id);
          this.retire(m, 'LIFETIME_EXPIRED');
        }
      }
    }
    this.kick();
  }

  // -------------------------------------------------------------------------------------------
  // taking
  // -------------------------------------------------------------------------------------------

  private find(spec: LaunchSpec): { pool: PoolState; member: Member } | undefined {
    if (this.pools.size === 0) return undefined;
    let key: string | undefined;
    const now = this.d.clock.now().getTime();
    for (const pool of this.pools.values()) {
      // A few fields first: most misses differ in one of them, and the full key is a serialization.
      const t = pool.launch;
      if (!t || t.image !== spec.image || t.cpuMillis !== spec.cpuMillis || t.memoryBytes !== spec.memoryBytes) continue;
      key ??= this.matchKeyOf(spec);
      if (pool.key !== key) continue;
      if (!Object.entries(t.env).every(([k, v]) => spec.env[k] === v)) continue;
      if (!t.files.every((f) => spec.files.some((g) => g.path === f.path && g.content.equals(f.content)))) continue;
      for (const member of pool.members.values()) {
        if (member.ready && member.deadlineMs - now >= spec.lifetimeSeconds * 1000) return { pool, member };
      }
    }
    return undefined;
  }

  /** The member reserved for this launch, while it is still alive and idle in its pool's keeping. */
  private takeReserved(spec: LaunchSpec): { pool: PoolState; member: Member } | undefined {
    const r = this.reserved.get(spec.sandboxId);
    if (!r) return undefined;
    this.reserved.delete(spec.sandboxId);
    if (this.holds(r.pool, r.member) && this.matchKeyOf(spec) === r.pool.key) return r;
    // Ended, or its pool was drained meanwhile: the launch looks again (or starts cold, rarely
    // past the capacity its create was admitted under, for a window of one await).
    this.retire(r.member);
    return undefined;
  }

  private matchKeyOf(spec: LaunchSpec): string {
    let key = this.matchKeys.get(spec);
    if (key === undefined) {
      key = warmMatchKey(spec);
      this.matchKeys.set(spec, key);
    }
    return key;
  }

  async launch(spec: LaunchSpec): Promise<void> {
    if (this.taken.has(spec.sandboxId)) return;
    const hit = this.takeReserved(spec) ?? this.find(spec);
    if (!hit) {
      this.coldLaunches++;
      return this.d.inner.launch(spec);
    }
    // Claimed before any await: no other launch can see this member from here on.
    hit.pool.members.delete(hit.member.id);
    this.memberPool.delete(hit.member.id);
    this.taken.set(spec.sandboxId, { warmId: hit.member.id, env: { ...spec.env, HOSTNAME: spec.sandboxId } });
    this.warmToSandbox.set(hit.member.id, spec.sandboxId);
    this.warmTakes++;
    this.emit({ sandboxId: spec.sandboxId, state: 'STATE_CREATING', at: this.d.clock.now() });
    this.refillSoon();
    // Resolved once the sandbox is RUNNING (or FAILED): the create's reply then says so itself, so
    // the gateway needs no state event to beat the reply to answer a warm create RUNNING.
    await this.handOver(hit.member, hit.pool, spec);
  }

  /**
   * Records the take's tie (so a runner restart adopts the sandbox as the create's), gives the
   * sandbox the create's files, then reports it RUNNING under the create's id. Never rejects.
   */
  private async handOver(member: Member, pool: PoolState, spec: LaunchSpec): Promise<void> {
    const warmId = member.id;
    const template = pool.launch?.files ?? [];
    // In place before RUNNING: a create is never reported running with a sandbox that a restart
    // of the runner would not know as its own. A store may be remote (a pod patch on Kubernetes):
    // it is written while the files are (it never rejects), and awaited before RUNNING.
    const tied = this.persistTie(member, spec);
    try {
      for (const f of spec.files) {
        if (template.some((t) => t.path === f.path && t.content.equals(f.content))) continue;
        await this.d.inner.writeFile(warmId, f.path, f.content);
      }
      await tied;
      this.emit({ sandboxId: spec.sandboxId, state: 'STATE_RUNNING', at: this.d.clock.now() });
    } catch (e) {
      this.emit({ sandboxId: spec.sandboxId, state: 'STATE_FAILED', reason: 'FAILED_TO_START', message: `writing files failed: ${String(e)}`, at: this.d.clock.now() });
      // Not awaited: the create's reply (FAILED already) does not wait for the sandbox to end.
      void this.d.inner.stop(warmId, 0, 'FAILED_TO_START').catch(() => undefined);
    }
  }

  private async persistTie(member: Member, spec: LaunchSpec): Promise<void> {
    const warmId = member.id;
    const taken = this.taken.get(spec.sandboxId);
    if (!this.ties || !taken) return;
    const now = this.d.clock.now();
    const tie: WarmTie = {
      v: 1,
      warmId,
      warmDeadline: new Date(member.deadlineMs).toISOString(),
      sandboxId: spec.sandboxId,
      env: taken.env,
      labels: spec.labels,
      takenAt: now.toISOString(),
      deadline: new Date(now.getTime() + spec.lifetimeSeconds * 1000).toISOString(),
    };
    try {
      await this.ties.put(tie, spec.secretEnvNames ?? []);
    } catch (e) {
      // The sandbox still serves its create; only a runner restart would now lose it.
      this.d.log.warn('Could not persist a warm take (a runner restart would reap it)', { warmId, sandboxId: spec.sandboxId, error: String(e) });
    }
  }

  private dropTie(warmId: string): void {
    try {
      this.ties?.remove(warmId);
    } catch {
      // a tie left behind is dropped by the next recovery, which finds no sandbox for it
    }
  }

  private onInnerEvent(e: BackendEvent): void {
    const owner = this.warmToSandbox.get(e.sandboxId);
    if (owner) {
      // RUNNING was the pool's, long before the take; only what follows it is the create's.
      if (e.state === 'STATE_RUNNING' || e.state === 'STATE_CREATING') return;
      // An ended sandbox is nothing a restarted runner could adopt.
      if (isTerminalSandboxState(e.state)) this.dropTie(e.sandboxId);
      this.emit({ ...e, sandboxId: owner });
      return;
    }
    if (this.draining.has(e.sandboxId)) {
      if (isTerminalSandboxState(e.state)) {
        this.draining.delete(e.sandboxId);
        this.drainingMembers.delete(e.sandboxId);
        this.memberPool.delete(e.sandboxId);
        this.kick();
      }
      return;
    }
    const poolName = this.memberPool.get(e.sandboxId);
    if (poolName !== undefined) {
      const pool = this.pools.get(poolName);
      const member = pool?.members.get(e.sandboxId);
      if (!pool || !member) {
        // A reserved member that ends before its create launches: that launch must not take it.
        if (isTerminalSandboxState(e.state)) this.memberPool.delete(e.sandboxId);
        return;
      }
      if (e.state === 'STATE_RUNNING') {
        pool.failures = 0;
        if (pool.error?.startsWith('warm sandbox failed')) delete pool.error;
        void this.prime(e.sandboxId).then(() => {
          // Still idle in its pool (not drained or ended meanwhile): now it may be taken.
          if (pool.members.get(member.id) === member) member.ready = true;
        });
      } else if (isTerminalSandboxState(e.state)) {
        if (member.ready) {
          // A warm sandbox that died idle is replaced at once.
          pool.members.delete(member.id);
          this.memberPool.delete(member.id);
          this.d.log.warn('Warm sandbox ended while idle; replacing it', { pool: poolName, warmId: member.id, reason: e.reason ?? null });
        } else {
          this.memberFailed(pool, member, e.message ?? e.reason ?? 'ended before running');
        }
        this.kick();
      }
      return;
    }
    this.emit(e);
  }

  /**
   * Does before a take what the first command of a taken sandbox would otherwise pay for: the
   * local backend starts a sandbox's exec daemon (a fork that joins the sandbox's cgroups, an RCU
   * grace period on cgroup v1, and enters its namespaces) on its first exec or file call, which
   * was most of a warm sandbox's time to first command. A `stat` of `/` is a file call that runs
   * nothing of the image. Then one exec of `PRIME_EXE`, a path no sandbox has: the supervisor, a
   * fork of the runner's zygote, otherwise copied about 120 pages of its exec path on the first
   * command (0.3 ms of its CPU), and the daemon and its spawner a few dozen more. Its spawn fails,
   * so the sandbox has still never run user code. A Kubernetes pod's exec has no such first-call
   * cost on the runner's side, so only the local backend is primed.
   */
  private async prime(warmId: string): Promise<void> {
    if (this.d.inner.kind !== 'local') return;
    try {
      await this.d.inner.stat(warmId, '/');
      await this.d.inner.exec(warmId, { argv: [PRIME_EXE], timeoutMs: 5_000, maxOutputBytes: 1024 });
    } catch (e) {
      this.d.log.warn('Could not prime a warm sandbox (its first command starts its exec daemon)', { warmId, error: String(e) });
    }
  }

  private emit(e: BackendEvent): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch {
        // one listener's failure must not starve the others
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // SandboxBackend, translated to the warm id of a taken sandbox
  // -------------------------------------------------------------------------------------------

  private real(sandboxId: string): string {
    return this.taken.get(sandboxId)?.warmId ?? sandboxId;
  }

  private envOf(sandboxId: string, env: Record<string, string> | undefined): Record<string, string> | undefined {
    const t = this.taken.get(sandboxId);
    return t ? { ...t.env, ...(env ?? {}) } : env;
  }

  capabilities(): RunnerCapabilities {
    return this.d.inner.capabilities();
  }

  onEvent(listener: (e: BackendEvent) => void): void {
    this.listeners.push(listener);
  }

  stop(sandboxId: string, graceSeconds: number, reason: SandboxStateReason): Promise<void> {
    return this.d.inner.stop(this.real(sandboxId), graceSeconds, reason);
  }

  exec(sandboxId: string, req: ExecRequest): Promise<ExecResult> {
    this.noteServed(sandboxId);
    const env = this.envOf(sandboxId, req.env);
    return this.d.inner.exec(this.real(sandboxId), { ...req, ...(env ? { env } : {}) });
  }

  execStream(sandboxId: string, req: ExecStreamRequest): Promise<ExecProcess> {
    this.noteServed(sandboxId);
    const env = this.envOf(sandboxId, req.env);
    return this.d.inner.execStream(this.real(sandboxId), { ...req, ...(env ? { env } : {}) });
  }

  readFile(sandboxId: string, path: string): Promise<Readable> {
    this.noteServed(sandboxId);
    return this.d.inner.readFile(this.real(sandboxId), path);
  }

  writeFile(sandboxId: string, path: string, content: Readable | Buffer, mode?: number): Promise<void> {
    this.noteServed(sandboxId);
    return this.d.inner.writeFile(this.real(sandboxId), path, content, mode);
  }

  listDir(sandboxId: string, path: string): Promise<FileStat[]> {
    this.noteServed(sandboxId);
    return this.d.inner.listDir(this.real(sandboxId), path);
  }

  stat(sandboxId: string, path: string): Promise<FileStat> {
    this.noteServed(sandboxId);
    return this.d.inner.stat(this.real(sandboxId), path);
  }

  remove(sandboxId: string, path: string, recursive: boolean): Promise<void> {
    this.noteServed(sandboxId);
    return this.d.inner.remove(this.real(sandboxId), path, recursive);
  }

  logs(sandboxId: string, req: LogRequest): AsyncIterable<LogChunk> {
    return this.d.inner.logs(this.real(sandboxId), req);
  }

  deleteLogs(sandboxId: string): Promise<void> {
    return this.d.inner.deleteLogs(this.real(sandboxId));
  }

  /**
   * What the backend still runs, with warm sandboxes sorted out: a taken one (its tie persisted at
   * the take) is reported as its create's sandbox, under the create's id with the create's labels
   * and deadline, and served with the create's environment again; an idle one is nobody's and is
   * reaped (the pool refills).
   */
  async recover(): Promise<RecoveredSandbox[]> {
    // Tied before the backend looks: a taken sandbox it finds ended reports that under the create's id.
    const ties = new Map(((await this.ties?.loadAll()) ?? []).map((t) => [t.warmId, t]));
    for (const t of ties.values()) {
      this.taken.set(t.sandboxId, { warmId: t.warmId, env: t.env });
      this.warmToSandbox.set(t.warmId, t.sandboxId);
    }
    const found = await this.d.inner.recover();
    const out: RecoveredSandbox[] = [];
    const adopted = new Set<string>();
    for (const r of found) {
      if (r.labels[WARM_POOL_LABEL] === undefined) {
        out.push(r);
        continue;
      }
      const tie = ties.get(r.sandboxId);
      if (tie) {
        adopted.add(tie.warmId);
        // The backend moves a sandbox's deadline by the time it spent paused; the create's moves as much.
        const moved = Math.max(0, r.deadline.getTime() - Date.parse(tie.warmDeadline));
        const deadline = Math.min(Date.parse(tie.deadline) + moved, r.deadline.getTime());
        const unrecoverable = tie.unrecoverable ? { unrecoverable: { reason: 'REAPED_UNKNOWN' as const, message: tie.unrecoverable } } : {};
        out.push({ ...r, sandboxId: tie.sandboxId, labels: tie.labels, startedAt: new Date(tie.takenAt), deadline: new Date(deadline), ...unrecoverable });
        continue;
      }
      await this.d.inner.reap(r.sandboxId, 'REAPED_UNKNOWN').catch((e: unknown) => {
        this.d.log.warn('Failed to reap a warm sandbox of an earlier runner', { warmId: r.sandboxId, error: String(e) });
      });
    }
    // Ties of sandboxes the backend no longer runs: nothing names their warm ids again.
    for (const t of ties.values()) {
      if (adopted.has(t.warmId)) continue;
      this.dropTie(t.warmId);
      if (this.taken.get(t.sandboxId)?.warmId === t.warmId) this.taken.delete(t.sandboxId);
      this.warmToSandbox.delete(t.warmId);
    }
    return out;
  }

  reap(sandboxId: string, reason: SandboxStateReason): Promise<void> {
    return this.d.inner.reap(this.real(sandboxId), reason);
  }

  /**
   * The service no longer knows `sandboxId` (it forgot the ended record): no call can name it
   * again, so a taken sandbox's tie to its warm id goes too (else the maps grow with every take).
   */
  forget(sandboxId: string): void {
    const t = this.taken.get(sandboxId);
    if (!t) return;
    this.taken.delete(sandboxId);
    this.warmToSandbox.delete(t.warmId);
    this.dropTie(t.warmId);
  }

  /** Taken sandboxes still tied to their warm ids (bounded by the service's retention of ended ones). */
  takenCount(): number {
    return this.taken.size;
  }

  degraded(): string | undefined {
    return this.d.inner.degraded?.();
  }

  /** Stops every idle warm sandbox (they are nobody's), then closes the backend. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.maintenance);
    if (this.timer) clearTimeout(this.timer);
    if (this.refillTimer) clearTimeout(this.refillTimer);
    for (const pool of this.pools.values()) this.drain(pool, pool.members.size);
    const ids = [...this.draining];
    await Promise.all(ids.map((id) => this.d.inner.reap(id, 'STOPPED_BY_USER').catch(() => undefined)));
    await this.d.inner.close();
    this.ties?.close();
  }
}

function add(hold: WarmHold, m: Member): void {
  hold.cpuMillis += m.reservation.cpuMillis;
  hold.memoryBytes += m.reservation.memoryBytes;
  hold.sandboxes++;
}

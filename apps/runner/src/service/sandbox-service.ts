import {
  CreateSandboxRequestSchema,
  DEFAULT_MAX_OUTPUT_BYTES,
  DeleteLogsRequestSchema,
  DeleteSandboxRequestSchema,
  ExecRequestSchema,
  GetSandboxRequestSchema,
  isPaddockError,
  isTerminalSandboxState,
  ListSandboxesRequestSchema,
  PaddockError,
  PauseSandboxRequestSchema,
  ResumeSandboxRequestSchema,
  type SandboxUsageMap,
  type SnapshotSandboxResponse,
  SandboxSpecSchema,
  type DeleteSandboxResponse,
  type ExecResponse,
  type RunnerCapacity,
  type Sandbox,
  type SandboxStateEvent,
  type SandboxStateReason,
} from '@paddock/contracts';
import { z } from 'zod';
import type { BackendEvent, LaunchSpec, RecoveredSandbox, SandboxBackend } from '../backend/sandbox-backend';
import type { PolicyHolder } from '../policy/policy-holder';
import { invalidRequest, runnerErrors, toPaddockError } from './errors';
import { checkPod } from './launch-pod';
import { checkLaunchViolations } from './launch-security';
import { IdleTracker } from './idle-tracker';
import { UsageSampler } from './usage-sampler';
import { RunnerSnapshots } from './snapshots';
import type { SandboxMetricsRow } from '../observability/sandbox-metrics';
import type { SnapshotStore } from '../snapshots/snapshot-store';
import { checkImagePullCredentials, checkSecretStoreShapes, deliveredSecretEnv } from './secret-env';
import { checkPrimaryOnlyParts } from './primary-only-parts';
import { ResolveCache, type AdmittedSpec } from './resolve-cache';
import {
  effectiveFieldsOf,
  primaryContainerOf,
  readSandboxMeta,
  reservationOf,
  RUNNER_ID_LABEL,
  toLaunchSpec,
  type PersistedSandboxMeta,
  type SandboxHostCaps,
} from './launch-spec';
import {
  applyStateChange,
  canonicalJson,
  heldCpuMillis,
  holdsCapacity,
  nextSequence,
  toSandbox,
  type SandboxRecord,
  type StateChange,
} from './sandbox-record';

export interface RunnerIdentity {
  runnerId: string;
  organizationId: string;
  clusterId: string;
  zone: string;
  runnerGroupId: string;
}

export interface RunnerCapacityLimits {
  cpuMillis: number;
  memoryBytes: number;
  sandboxes: number;
}

export interface Clock {
  now(): Date;
}

export interface RunnerLogger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export interface SandboxServiceDeps {
  backend: SandboxBackend;
  identity: RunnerIdentity;
  policy: PolicyHolder;
  capacity: RunnerCapacityLimits;
  caps: SandboxHostCaps;
  publishState: (evt: SandboxStateEvent) => void;
  clock: Clock;
  log: RunnerLogger;
  /** How often idle sandboxes are looked for (the policy's `lifecycle.idleTimeoutSeconds`); default 1 s. */
  idleSweepMs?: number;
  /** Where file-system snapshots go (shared by the runners of this machine); none = snapshots refused. */
  snapshotStore?: SnapshotStore;
  /**
   * The runner's warm pools, when it has any: the capacity their idle sandboxes hold, and whether a
   * launch would take one (its capacity is then already held, so it is not asked for twice).
   */
  warm?: { held(): { cpuMillis: number; memoryBytes: number; sandboxes: number }; reserve(launch: LaunchSpec): boolean; release(sandboxId: string): void };
}

/** What `recover()` did with each sandbox found running at startup. */
export interface RecoveryReport {
  adopted: string[];
  reaped: { sandboxId: string; reason: SandboxStateReason }[];
}

/** Errno codes of a sandbox whose supervisor is gone: it ended between the state check and the call. */
const SANDBOX_GONE = new Set(['ENOENT', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE']);

/**
 * What an exec that failed in the backend tells the caller. A sandbox that ended while the
 * command was being sent is reported as such (its state, or "ending"), never as a missing file.
 */
export function execFailure(rec: SandboxRecord, e: unknown): PaddockError {
  if (isPaddockError(e)) return e;
  const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  if (typeof code === 'string' && SANDBOX_GONE.has(code)) {
    return isTerminalSandboxState(rec.state) ? runnerErrors.terminated(rec.sandboxId, rec.state) : runnerErrors.notRunning(rec.sandboxId, 'ending');
  }
  return toPaddockError(e);
}

/**
 * `canonicalJson({ organizationId, spec, labels })`, put together from the spec's canonical JSON
 * (computed once per create, it also keys the admitted specs): the same string, keys in order.
 */
export function requestFingerprint(organizationId: string, specJson: string | undefined, labels: Record<string, string>): string {
  if (specJson === undefined) return canonicalJson({ organizationId, labels });
  return `{"labels":${canonicalJson(labels)},"organizationId":${JSON.stringify(organizationId)},"spec":${specJson}}`;
}

/** The create request with its spec left raw for the policy engine. */
const CreateEnvelopeSchema = CreateSandboxRequestSchema.extend({ spec: z.unknown() });

function parse<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const r = schema.safeParse(body);
  if (!r.success) throw invalidRequest(r.error);
  return r.data;
}

/**
 * The runner's sandbox bookkeeping: admission (policy, capacity, idempotency), the lifecycle
 * registry fed by backend events, lifetime enforcement, and the unary operations. Transport-free:
 * the NATS layer calls it with decoded bodies and turns thrown PaddockErrors into error replies.
 */
export class SandboxService {
  private readonly records = new Map<string, SandboxRecord>();
  private readonly lifetimeTimers = new Map<string, NodeJS.Timeout>();
  private readonly d: SandboxServiceDeps;
  private readonly idle: IdleTracker;
  private readonly idleSweep: NodeJS.Timeout;
  private readonly usage = new UsageSampler();
  private readonly snapshots: RunnerSnapshots;
  /** Pause and resume of one sandbox run one at a time (a resume waits for a pause in flight). */
  private readonly freezeOps = new Map<string, Promise<unknown>>();
  private readonly admitted = new ResolveCache();
  /**
   * Creates being answered whose state events wait for the end of the call, each with the last
   * one held: a warm take's states follow each other within microseconds, and every event is a
   * message and a row update on the gateway, just ahead of the create's reply that carries the
   * same state. Anything else (a cold launch's progress) is published as it happens.
   */
  private readonly answering = new Map<string, { rec: SandboxRecord; at: Date } | undefined>();

  constructor(deps: SandboxServiceDeps) {
    this.d = deps;
    deps.backend.onEvent((e) => this.onBackendEvent(e));
    this.idle = new IdleTracker(() => deps.clock.now());
    this.snapshots = new RunnerSnapshots(deps.backend, deps.snapshotStore);
    this.idleSweep = setInterval(() => this.pauseIdle(), deps.idleSweepMs ?? 1000);
    this.idleSweep.unref();
  }

  // -------------------------------------------------------------------------------------------
  // lifecycle operations
  // -------------------------------------------------------------------------------------------

  /**
   * Admits and launches a sandbox, replying before it runs (creation is asynchronous: clients wait for RUNNING). Idempotent by sandboxId: a
   * redelivered create returns the existing sandbox; the same id with another spec is refused.
   */
  async create(body: unknown): Promise<Sandbox> {
    // The spec goes to the policy engine as sent: it checks structure and policy in one pass and
    // names every violation. Only an admitted spec is parsed into its typed form.
    const req = parse(CreateEnvelopeSchema, body);
    const specJson = req.spec === undefined ? undefined : canonicalJson(req.spec);
    const fingerprint = requestFingerprint(req.organizationId, specJson, req.labels ?? {});
    const existing = this.records.get(req.sandboxId);
    if (existing) {
      if (existing.requestFingerprint !== fingerprint) throw runnerErrors.alreadyExists(req.sandboxId);
      return this.view(existing);
    }
    const { resolved, spec } = this.admit(req.spec, specJson);
    checkSecretStoreShapes(spec);
    checkImagePullCredentials(spec, req.imagePullDockerConfig);
    const primaryIndex = Math.max(0, spec.containers.findIndex((c) => c.name === primaryContainerOf(resolved).name));
    // The local supervisor writes every container's files; the Kubernetes pod takes them (and GPUs) on its sandbox container only.
    if (this.d.backend.kind === 'kubernetes') checkPrimaryOnlyParts(spec, primaryIndex);
    const secretEnv = deliveredSecretEnv(spec, req.secretEnv, primaryIndex);
    const allocation = reservationOf(resolved);

    // Registered before the first await: a concurrent redelivery of this create finds it.
    const now = this.d.clock.now();
    const meta: PersistedSandboxMeta = {
      v: 1,
      organizationId: req.organizationId,
      spec,
      labels: req.labels ?? {},
      effective: effectiveFieldsOf(resolved),
      requestFingerprint: fingerprint,
      createTime: now.toISOString(),
      cpuMillis: allocation.cpuMillis,
      memoryBytes: allocation.memoryBytes,
    };
    const rec: SandboxRecord = {
      sandboxId: req.sandboxId,
      organizationId: req.organizationId,
      spec,
      labels: meta.labels,
      effective: meta.effective,
      requestFingerprint: fingerprint,
      state: 'STATE_PENDING',
      createTime: now,
      sequence: nextSequence(0, now),
      allocation,
      deadline: new Date(now.getTime() + resolved.lifetimeSeconds * 1000),
    };
    const launch = toLaunchSpec({
      sandboxId: rec.sandboxId,
      organizationId: rec.organizationId,
      runnerId: this.d.identity.runnerId,
      spec,
      resolved,
      caps: this.d.caps,
      meta,
      secretEnv,
      ...(req.imagePullDockerConfig ? { imagePullDockerConfig: req.imagePullDockerConfig } : {}),
    });
    checkLaunchViolations(resolved, launch, this.d.backend);
    // Claimed here, before any await: see WarmPoolBackend.reserve.
    const takesWarm = this.d.warm?.reserve(launch) ?? false;
    this.checkCapacity(allocation, takesWarm);
    // A warm take goes PENDING → CREATING → RUNNING within this call: only the last is published
    // (before the reply, as the others would have been), the reply says as much.
    if (takesWarm) this.answering.set(rec.sandboxId, undefined);
    try {
      this.records.set(rec.sandboxId, rec);
      this.emit(rec);
      this.armLifetime(rec);
      this.idle.track(rec.sandboxId, this.d.policy.current().policy.constraints?.lifecycle?.idleTimeoutSeconds ?? 0);
      try {
        const restoreArchive = await this.snapshots.restoreArchiveFor(rec.organizationId, spec, '/tmp');
        await this.d.backend.launch(restoreArchive ? { ...launch, restoreArchive } : launch);
      } catch (e) {
        const err = toPaddockError(e);
        this.transition(rec.sandboxId, {
          state: 'STATE_FAILED',
          reason: 'FAILED_TO_START',
          message: err.reason?.startsWith('CWSANDBOX_FSS_') ? `${err.reason}: ${err.message}` : err.message,
          at: this.d.clock.now(),
        });
      }
      return this.view(this.mustGet(rec.sandboxId));
    } finally {
      if (takesWarm) {
        // A no-op once the launch took its member (a restore step that failed first gives it back).
        this.d.warm?.release(rec.sandboxId);
        this.publishHeld(rec.sandboxId);
      }
    }
  }

  /** Publishes the last state event held for a create being answered (see `answering`). */
  private publishHeld(sandboxId: string): void {
    const held = this.answering.get(sandboxId);
    this.answering.delete(sandboxId);
    if (held) this.publish(held.rec, held.at);
  }

  /** The policy's resolution and the typed form of a spec it admits (cached by the spec's canonical JSON). */
  private admit(raw: unknown, specJson: string | undefined): AdmittedSpec {
    const capabilities = this.d.backend.capabilities();
    const cached = specJson === undefined ? undefined : this.admitted.get(specJson, this.d.policy.current(), capabilities);
    if (cached) return cached;
    const decision = this.d.policy.resolve(raw, capabilities);
    if (!decision.ok) throw runnerErrors.policyViolation(decision.violations);
    const { resolved } = decision;
    checkPod(resolved, { portForward: typeof this.d.backend.connectPort === 'function' });
    const typed = SandboxSpecSchema.safeParse(raw);
    if (!typed.success) throw invalidRequest(typed.error, 'spec');
    const admitted = { resolved, spec: typed.data };
    if (specJson !== undefined) this.admitted.set(specJson, admitted);
    return admitted;
  }

  get(body: unknown): Sandbox {
    const req = parse(GetSandboxRequestSchema, body);
    return this.view(this.find(req.organizationId, req.sandboxId));
  }

  list(body: unknown): Sandbox[] {
    const req = parse(ListSandboxesRequestSchema, body);
    const out: Sandbox[] = [];
    for (const rec of this.records.values()) {
      if (rec.organizationId !== req.organizationId) continue;
      if (!req.showTerminated && isTerminalSandboxState(rec.state)) continue;
      if (req.states?.length && !req.states.includes(rec.state)) continue;
      const tags = rec.spec.tags ?? [];
      if (req.tags?.some((t) => !tags.includes(t))) continue;
      out.push(this.view(rec));
    }
    return out;
  }

  /** Stops a sandbox: replies with it in STATE_TERMINATING; the terminal state follows as an event. */
  delete(body: unknown): DeleteSandboxResponse {
    const req = parse(DeleteSandboxRequestSchema, body);
    const rec = this.records.get(req.sandboxId);
    if (!rec || rec.organizationId !== req.organizationId) {
      if (req.allowMissing) return {};
      throw runnerErrors.sandboxNotFound(req.sandboxId);
    }
    if (isTerminalSandboxState(rec.state) || rec.state === 'STATE_TERMINATING') return { sandbox: this.view(rec) };
    this.stop(rec.sandboxId, req.gracePeriodSeconds, 'STOPPED_BY_USER');
    return { sandbox: this.view(this.mustGet(rec.sandboxId)) };
  }

  async exec(body: unknown): Promise<ExecResponse> {
    const req = parse(ExecRequestSchema, body);
    const rec = await this.ensureRunning(req.organizationId, req.sandboxId);
    const r = await this.d.backend
      .exec(req.sandboxId, {
        argv: req.argv,
        ...(req.container ? { container: req.container } : {}),
        env: req.env,
        ...(req.cwd ? { cwd: req.cwd } : {}),
        ...(req.timeoutSeconds ? { timeoutMs: Math.round(req.timeoutSeconds * 1000) } : {}),
        maxOutputBytes: req.maxOutputBytes || DEFAULT_MAX_OUTPUT_BYTES,
        ...(req.stdinBase64 !== undefined ? { stdin: Buffer.from(req.stdinBase64, 'base64') } : {}),
      })
      .catch((e: unknown) => {
        throw execFailure(rec, e);
      });
    return {
      exitCode: r.exitCode,
      stdoutBase64: r.stdout.toString('base64'),
      stderrBase64: r.stderr.toString('base64'),
      stdoutTruncated: r.stdoutTruncated,
      stderrTruncated: r.stderrTruncated,
      stdoutBytesProduced: r.stdoutBytes,
      stderrBytesProduced: r.stderrBytes,
      timedOut: r.timedOut,
    };
  }

  /** DeleteSandboxLogs: only for an ended sandbox; idempotent. */
  async deleteLogs(body: unknown): Promise<Record<string, never>> {
    const req = parse(DeleteLogsRequestSchema, body);
    const rec = this.find(req.organizationId, req.sandboxId);
    if (!isTerminalSandboxState(rec.state)) throw runnerErrors.notTerminal(rec.sandboxId, rec.state);
    await this.d.backend.deleteLogs(rec.sandboxId);
    this.records.set(rec.sandboxId, { ...rec, logsDeleted: true });
    return {};
  }

  // -------------------------------------------------------------------------------------------
  // pause and resume
  // -------------------------------------------------------------------------------------------

  /** Freezes a RUNNING sandbox; a PAUSED one is returned as it is. */
  async pause(body: unknown): Promise<Sandbox> {
    const req = parse(PauseSandboxRequestSchema, body);
    return this.view(await this.freeze(this.find(req.organizationId, req.sandboxId).sandboxId, 'PAUSED_BY_USER'));
  }

  /** Thaws a PAUSED sandbox; a RUNNING one is returned as it is. */
  async resume(body: unknown): Promise<Sandbox> {
    const req = parse(ResumeSandboxRequestSchema, body);
    const rec = this.find(req.organizationId, req.sandboxId);
    this.idle.touch(rec.sandboxId);
    return this.view(await this.thaw(rec.sandboxId));
  }

  /**
   * What exec, file and log calls go through: traffic for the idle timeout, and a PAUSED sandbox
   * is resumed first (clients treat PAUSED as ready). Then as `requireRunning`.
   */
  async ensureRunning(organizationId: string, sandboxId: string): Promise<SandboxRecord> {
    const rec = this.find(organizationId, sandboxId);
    this.idle.touch(sandboxId);
    if (rec.state === 'STATE_PAUSED' || this.freezeOps.has(sandboxId)) await this.thaw(sandboxId);
    return this.requireRunning(organizationId, sandboxId);
  }

  /** Traffic that needs no resume (bytes of a service connection already open): the idle clock starts again. */
  noteTraffic(sandboxId: string): void {
    this.idle.touch(sandboxId);
  }

  /** A log read: traffic, and a paused sandbox resumes (its output continues where it stopped). */
  async touchForLogs(organizationId: string, sandboxId: string): Promise<SandboxRecord> {
    const rec = this.find(organizationId, sandboxId);
    this.idle.touch(sandboxId);
    if (rec.state === 'STATE_PAUSED') await this.thaw(sandboxId);
    return this.find(organizationId, sandboxId);
  }

  private serialize(sandboxId: string, op: () => Promise<SandboxRecord>): Promise<SandboxRecord> {
    const before = this.freezeOps.get(sandboxId) ?? Promise.resolve();
    const run = before.catch(() => undefined).then(op);
    // The queue's own link never rejects: the caller of `run` sees the failure.
    const tail: Promise<void> = run.then(
      () => this.dequeue(sandboxId, tail),
      () => this.dequeue(sandboxId, tail),
    );
    this.freezeOps.set(sandboxId, tail);
    return run;
  }

  private dequeue(sandboxId: string, tail: Promise<void>): void {
    if (this.freezeOps.get(sandboxId) === tail) this.freezeOps.delete(sandboxId);
  }

  private freeze(sandboxId: string, reason: 'PAUSED_BY_USER' | 'IDLE_TIMEOUT'): Promise<SandboxRecord> {
    return this.serialize(sandboxId, async () => {
      const rec = this.mustGet(sandboxId);
      if (rec.state === 'STATE_PAUSED') return rec;
      const pause = this.d.backend.pause?.bind(this.d.backend);
      if (!pause) throw cannotPause(this.d.backend.kind);
      this.requireRunning(rec.organizationId, sandboxId);
      await pause(sandboxId, reason);
      // The backend reported STATE_PAUSED (with the reason) before resolving; this covers one that did not.
      this.transition(sandboxId, { state: 'STATE_PAUSED', reason, at: this.d.clock.now() });
      this.d.log.info('Paused sandbox', { sandboxId, reason });
      return this.mustGet(sandboxId);
    });
  }

  private thaw(sandboxId: string): Promise<SandboxRecord> {
    return this.serialize(sandboxId, async () => {
      const rec = this.mustGet(sandboxId);
      if (rec.state !== 'STATE_PAUSED') return rec;
      const resume = this.d.backend.resume?.bind(this.d.backend);
      if (!resume) throw cannotPause(this.d.backend.kind);
      // Its CPU request was released while paused: it must fit again.
      const free = this.capacity().cpuMillisFree;
      if (rec.allocation.cpuMillis > free) throw runnerErrors.atCapacity(`resuming needs ${rec.allocation.cpuMillis}m CPU, ${free}m free`);
      await resume(sandboxId);
      this.transition(sandboxId, { state: 'STATE_RUNNING', at: this.d.clock.now() });
      return this.mustGet(sandboxId);
    });
  }

  /**
   * Captures a live (RUNNING or PAUSED) sandbox's disk into the snapshot store. One at a time
   * with its pause and resume, which would otherwise thaw it mid-capture.
   */
  async snapshot(body: unknown): Promise<SnapshotSandboxResponse> {
    const req = parse(GetSandboxRequestSchema, body);
    const rec = this.find(req.organizationId, req.sandboxId);
    if (rec.state !== 'STATE_PAUSED') this.requireRunning(req.organizationId, req.sandboxId);
    this.idle.touch(rec.sandboxId);
    let out: SnapshotSandboxResponse | undefined;
    await this.serialize(rec.sandboxId, async () => {
      out = await this.snapshots.capture(body, rec.spec, rec.sandboxId);
      this.d.log.info('Captured file-system snapshot', { sandboxId: rec.sandboxId, sizeBytes: out.sizeBytes, frozenMs: Math.round(out.frozenMs) });
      return this.mustGet(rec.sandboxId);
    });
    return out as SnapshotSandboxResponse;
  }

  deleteSnapshot(body: unknown): Promise<{ deleted: boolean }> {
    return this.snapshots.delete(body);
  }

  /** Pauses every RUNNING sandbox idle past its policy's timeout. */
  private pauseIdle(): void {
    for (const id of this.idle.due()) {
      const rec = this.records.get(id);
      if (!rec || isTerminalSandboxState(rec.state)) {
        this.idle.forget(id);
        continue;
      }
      // Idle again only after another full timeout (a failed pause is retried then, not at once).
      this.idle.touch(id);
      if (rec.state !== 'STATE_RUNNING' || this.freezeOps.has(id)) continue;
      this.freeze(id, 'IDLE_TIMEOUT').catch((e: unknown) => this.d.log.warn('Idle pause failed', { sandboxId: id, error: String(e) }));
    }
  }

  /**
   * Samples every live sandbox's cgroups (once per heartbeat) and returns what each uses; the
   * same figures show as `status.resourceUsage` here and, through the heartbeat, on the gateway.
   */
  sampleUsage(): SandboxUsageMap {
    const read = this.d.backend.usage?.bind(this.d.backend);
    if (!read) return {};
    const live = [...this.records.values()].filter((r) => r.state === 'STATE_RUNNING' || r.state === 'STATE_PAUSED').map((r) => r.sandboxId);
    return this.usage.sample(live, read, this.d.clock.now());
  }

  /** Every live sandbox with its last usage sample, for the runner's metrics. */
  metricsRows(): SandboxMetricsRow[] {
    return [...this.records.values()]
      .filter((r) => !isTerminalSandboxState(r.state))
      .map((r) => {
        const usage = this.usage.get(r.sandboxId);
        return { sandboxId: r.sandboxId, organizationId: r.organizationId, state: r.state, ...(usage ? { usage } : {}) };
      });
  }

  /** Throws unless the sandbox exists for this organization and is RUNNING (exec, files, streams). */
  requireRunning(organizationId: string, sandboxId: string): SandboxRecord {
    const rec = this.find(organizationId, sandboxId);
    if (rec.state === 'STATE_RUNNING') return rec;
    if (isTerminalSandboxState(rec.state) || rec.state === 'STATE_TERMINATING') throw runnerErrors.terminated(sandboxId, rec.state);
    throw runnerErrors.notRunning(sandboxId, rec.state);
  }

  /** Throws unless the sandbox exists for this organization (logs work in any state). */
  find(organizationId: string, sandboxId: string): SandboxRecord {
    const rec = this.records.get(sandboxId);
    // Another tenant's sandbox is reported as absent, never as forbidden: ids are not a secret
    // channel between organizations.
    if (!rec || rec.organizationId !== organizationId) throw runnerErrors.sandboxNotFound(sandboxId);
    return rec;
  }

  // -------------------------------------------------------------------------------------------
  // restart: adopt or reap
  // -------------------------------------------------------------------------------------------

  /**
   * Accounts for every sandbox the backend still runs after a runner restart. A sandbox whose
   * metadata is readable, that belongs to this runner and organization and whose deadline has not
   * passed is adopted with the spec resolved at its launch; anything else is reaped and reported
   * terminal with a reason. Nothing is left unaccounted for.
   */
  async recover(): Promise<RecoveryReport> {
    const found = await this.d.backend.recover();
    const report: RecoveryReport = { adopted: [], reaped: [] };
    for (const r of found) {
      const verdict = this.judgeRecovered(r);
      if (verdict.adopt) {
        this.adopt(r, verdict.meta);
        report.adopted.push(r.sandboxId);
        continue;
      }
      try {
        await this.d.backend.reap(r.sandboxId, verdict.reason);
      } catch (e) {
        this.d.log.error('Failed to reap sandbox found at startup', { sandboxId: r.sandboxId, error: String(e) });
      }
      report.reaped.push({ sandboxId: r.sandboxId, reason: verdict.reason });
      this.recordReaped(r, verdict.meta, verdict.reason);
    }
    if (found.length) this.d.log.info('Recovered sandboxes', { adopted: report.adopted.length, reaped: report.reaped.length });
    return report;
  }

  private judgeRecovered(
    r: RecoveredSandbox,
  ): { adopt: true; meta: PersistedSandboxMeta } | { adopt: false; meta: PersistedSandboxMeta | undefined; reason: SandboxStateReason } {
    const meta = readSandboxMeta(r.labels);
    // Launched by another runner (a shared state dir, a renamed runner): not ours to serve.
    if (!meta || r.labels[RUNNER_ID_LABEL] !== this.d.identity.runnerId) {
      return { adopt: false, meta, reason: 'REAPED_UNKNOWN' };
    }
    if (r.unrecoverable) return { adopt: false, meta, reason: r.unrecoverable.reason };
    if (isTerminalSandboxState(r.state)) return { adopt: false, meta, reason: 'EXITED' };
    if (r.deadline.getTime() <= this.d.clock.now().getTime()) return { adopt: false, meta, reason: 'LIFETIME_EXPIRED' };
    return { adopt: true, meta };
  }

  private adopt(r: RecoveredSandbox, meta: PersistedSandboxMeta): void {
    const now = this.d.clock.now();
    const rec: SandboxRecord = {
      sandboxId: r.sandboxId,
      organizationId: meta.organizationId,
      spec: meta.spec,
      labels: meta.labels,
      effective: meta.effective,
      requestFingerprint: meta.requestFingerprint,
      state: r.state,
      createTime: new Date(meta.createTime),
      ...(r.state === 'STATE_RUNNING' || r.state === 'STATE_TERMINATING' || r.state === 'STATE_PAUSED' ? { startTime: r.startedAt } : {}),
      // The backend's deadline of a paused sandbox already leaves out the time paused so far.
      ...(r.state === 'STATE_PAUSED' ? { pausedAt: now, stateReason: 'PAUSED_BY_USER' as const } : {}),
      sequence: nextSequence(0, now),
      allocation: { cpuMillis: meta.cpuMillis, memoryBytes: meta.memoryBytes },
      deadline: r.deadline,
    };
    this.records.set(rec.sandboxId, rec);
    if (rec.state !== 'STATE_PAUSED') this.armLifetime(rec);
    // Adopted sandboxes take the idle timeout of the policy in force now (launches do not record it).
    this.idle.track(rec.sandboxId, this.d.policy.current().policy.constraints?.lifecycle?.idleTimeoutSeconds ?? 0);
    // Re-announce the current state: a gateway that missed events while the runner was down
    // converges on it (the clock-derived sequence is newer than anything sent before).
    this.emit(rec);
  }

  private recordReaped(r: RecoveredSandbox, meta: PersistedSandboxMeta | undefined, reason: SandboxStateReason): void {
    const now = this.d.clock.now();
    const rec: SandboxRecord = {
      sandboxId: r.sandboxId,
      organizationId: meta?.organizationId ?? this.d.identity.organizationId,
      spec: meta?.spec ?? { containers: [{ name: 'main' }] },
      labels: meta?.labels ?? {},
      effective: meta?.effective ?? {},
      requestFingerprint: meta?.requestFingerprint ?? '',
      state: reason === 'EXITED' && r.state === 'STATE_COMPLETED' ? 'STATE_COMPLETED' : 'STATE_FAILED',
      stateReason: reason,
      message: r.unrecoverable?.message ?? `found at runner startup and reaped (${reason})`,
      createTime: meta ? new Date(meta.createTime) : r.startedAt,
      startTime: r.startedAt,
      endTime: now,
      sequence: nextSequence(0, now),
      allocation: { cpuMillis: 0, memoryBytes: 0 },
      deadline: r.deadline,
    };
    this.records.set(rec.sandboxId, rec);
    this.emit(rec);
  }

  /**
   * The backend's metadata for such a sandbox is gone with it, so the event carries the runner's
   * organization (a runner serves one organization) and the record keeps only what is known.
   */
  private recordEndedUnknown(e: BackendEvent): void {
    const reason = e.reason ?? 'RUNNER_LOST';
    const rec: SandboxRecord = {
      sandboxId: e.sandboxId,
      organizationId: this.d.identity.organizationId,
      spec: { containers: [{ name: 'main' }] },
      labels: {},
      effective: {},
      requestFingerprint: '',
      state: e.state,
      stateReason: reason,
      message: e.message ?? `ended while no runner was watching it (${reason})`,
      ...(e.exitCode !== undefined ? { exitCode: e.exitCode } : {}),
      createTime: e.at,
      endTime: e.at,
      sequence: nextSequence(0, this.d.clock.now()),
      allocation: { cpuMillis: 0, memoryBytes: 0 },
      deadline: e.at,
    };
    this.records.set(rec.sandboxId, rec);
    this.emit(rec);
  }

  // -------------------------------------------------------------------------------------------
  // capacity and heartbeat figures
  // -------------------------------------------------------------------------------------------

  capacity(): RunnerCapacity {
    let cpu = 0;
    let mem = 0;
    let running = 0;
    for (const rec of this.records.values()) {
      if (!holdsCapacity(rec)) continue;
      cpu += heldCpuMillis(rec);
      mem += rec.allocation.memoryBytes;
      running++;
    }
    const warm = this.d.warm?.held();
    return {
      cpuMillisFree: Math.max(0, this.d.capacity.cpuMillis - cpu - (warm?.cpuMillis ?? 0)),
      memoryBytesFree: Math.max(0, this.d.capacity.memoryBytes - mem - (warm?.memoryBytes ?? 0)),
      sandboxesRunning: running,
      sandboxesMax: this.d.capacity.sandboxes,
      ...(warm?.sandboxes ? { sandboxesWarm: warm.sandboxes } : {}),
    };
  }

  /** `takesWarm`: the launch takes a warm sandbox, whose requests the pool already holds. */
  private checkCapacity(want: { cpuMillis: number; memoryBytes: number }, takesWarm = false): void {
    if (takesWarm) return;
    const free = this.capacity();
    const used = free.sandboxesRunning + (free.sandboxesWarm ?? 0);
    if (used >= free.sandboxesMax) throw runnerErrors.atCapacity(`${used}/${free.sandboxesMax} sandboxes`);
    if (want.cpuMillis > free.cpuMillisFree) throw runnerErrors.atCapacity(`${want.cpuMillis}m CPU wanted, ${free.cpuMillisFree}m free`);
    if (want.memoryBytes > free.memoryBytesFree) {
      throw runnerErrors.atCapacity(`${want.memoryBytes} bytes of memory wanted, ${free.memoryBytesFree} free`);
    }
  }

  /**
   * Forgets sandboxes that ended more than `retentionMs` ago, so a long-lived runner's registry
   * stays bounded. The gateway keeps the history; a `get` after that is `not_found`.
   */
  pruneTerminated(retentionMs: number): number {
    const cutoff = this.d.clock.now().getTime() - retentionMs;
    let n = 0;
    for (const [id, rec] of this.records) {
      if (isTerminalSandboxState(rec.state) && (rec.endTime?.getTime() ?? 0) < cutoff) {
        this.records.delete(id);
        this.d.backend.forget?.(id);
        n++;
      }
    }
    return n;
  }

  /** Clears timers. Sandboxes keep running: the next runner process adopts them. */
  close(): void {
    clearInterval(this.idleSweep);
    for (const t of this.lifetimeTimers.values()) clearTimeout(t);
    this.lifetimeTimers.clear();
  }

  // -------------------------------------------------------------------------------------------
  // internals
  // -------------------------------------------------------------------------------------------

  private onBackendEvent(e: BackendEvent): void {
    if (!this.records.has(e.sandboxId)) {
      // A sandbox launched by a previous runner process that the backend found dead (or reaped)
      // during recovery: report its end, so nothing stays unaccounted for. Non-terminal events of
      // unknown sandboxes are left to recover(), which adopts or reaps them.
      if (isTerminalSandboxState(e.state)) this.recordEndedUnknown(e);
      return;
    }
    this.transition(e.sandboxId, {
      state: e.state,
      ...(e.reason !== undefined ? { reason: e.reason } : {}),
      ...(e.message !== undefined ? { message: e.message } : {}),
      ...(e.exitCode !== undefined ? { exitCode: e.exitCode } : {}),
      at: e.at,
    });
  }

  private transition(sandboxId: string, change: StateChange): void {
    const rec = this.records.get(sandboxId);
    if (!rec) return;
    const next = applyStateChange(rec, change);
    if (!next) return;
    this.records.set(sandboxId, next);
    if (isTerminalSandboxState(next.state)) {
      this.disarmLifetime(sandboxId);
      this.idle.forget(sandboxId);
    } else if (next.state === 'STATE_PAUSED') {
      // Paused time does not count against the lifetime: the timer is re-armed on resume.
      this.disarmLifetime(sandboxId);
    } else if (rec.state === 'STATE_PAUSED') {
      this.armLifetime(next);
    }
    this.emit(next);
  }

  private stop(sandboxId: string, graceSeconds: number, reason: SandboxStateReason): void {
    this.transition(sandboxId, { state: 'STATE_TERMINATING', reason, at: this.d.clock.now() });
    this.d.backend.stop(sandboxId, graceSeconds, reason).catch((e: unknown) => {
      this.d.log.error('Failed to stop sandbox', { sandboxId, reason, error: String(e) });
      this.transition(sandboxId, { state: 'STATE_FAILED', reason, message: `stop failed: ${String(e)}`, at: this.d.clock.now() });
    });
  }

  /** The runner's own lifetime timer, in addition to the backend's backstop. */
  private armLifetime(rec: SandboxRecord): void {
    this.disarmLifetime(rec.sandboxId);
    const ms = Math.max(0, rec.deadline.getTime() - this.d.clock.now().getTime());
    // setTimeout caps at 2^31-1 ms (~24.8 days); a longer lifetime re-arms when the timer fires.
    const t = setTimeout(() => {
      const cur = this.records.get(rec.sandboxId);
      if (!cur || isTerminalSandboxState(cur.state) || cur.state === 'STATE_PAUSED') return;
      if (cur.deadline.getTime() > this.d.clock.now().getTime()) return this.armLifetime(cur);
      this.stop(rec.sandboxId, 0, 'LIFETIME_EXPIRED');
    }, Math.min(ms, 2 ** 31 - 1));
    t.unref();
    this.lifetimeTimers.set(rec.sandboxId, t);
  }

  private disarmLifetime(sandboxId: string): void {
    const t = this.lifetimeTimers.get(sandboxId);
    if (t) clearTimeout(t);
    this.lifetimeTimers.delete(sandboxId);
  }

  private emit(rec: SandboxRecord): void {
    const at = this.d.clock.now();
    if (this.answering.has(rec.sandboxId)) {
      this.answering.set(rec.sandboxId, { rec, at });
      return;
    }
    this.publish(rec, at);
  }

  private publish(rec: SandboxRecord, at: Date): void {
    const containerStatuses = this.d.backend.containerStatuses?.(rec.sandboxId);
    this.d.publishState({
      ...(containerStatuses ? { containerStatuses } : {}),
      sandboxId: rec.sandboxId,
      organizationId: rec.organizationId,
      runnerId: this.d.identity.runnerId,
      state: rec.state,
      ...(rec.stateReason !== undefined ? { reason: rec.stateReason } : {}),
      ...(rec.message !== undefined ? { message: rec.message } : {}),
      ...(rec.exitCode !== undefined ? { exitCode: rec.exitCode } : {}),
      at: at.toISOString(),
      sequence: rec.sequence,
    });
  }

  private mustGet(sandboxId: string): SandboxRecord {
    const rec = this.records.get(sandboxId);
    if (!rec) throw runnerErrors.sandboxNotFound(sandboxId);
    return rec;
  }

  private view(rec: SandboxRecord): Sandbox {
    const sandbox = toSandbox(rec, this.d.identity);
    const containerStatuses = this.d.backend.containerStatuses?.(rec.sandboxId);
    const usage = isTerminalSandboxState(rec.state) ? undefined : this.usage.get(rec.sandboxId);
    return {
      ...sandbox,
      status: { ...sandbox.status, ...(containerStatuses ? { containerStatuses } : {}), ...(usage ? { resourceUsage: usage } : {}) },
    };
  }
}

/** A backend without pause (Kubernetes: a pod cannot be frozen through the API) refuses it by name. */
function cannotPause(kind: string): PaddockError {
  return new PaddockError('failed_precondition', `the ${kind} backend cannot pause sandboxes`, {
    reason: 'CWSANDBOX_NOT_IMPLEMENTED',
    violations: [{ field: 'pause', rule: 'runner_capability', description: `pause and resume are not supported by the ${kind} backend` }],
  });
}


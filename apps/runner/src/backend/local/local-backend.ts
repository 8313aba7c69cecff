import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { Duplex, Readable } from 'node:stream';
import { isTerminalSandboxState, PaddockError, type FieldViolation, type ResolvedSandboxSpec, type RunnerCapabilities, type SandboxState, type SandboxStateReason } from '@paddock/contracts';
import type {
  BackendEvent,
  ContainerStatus,
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
  CgroupUsage,
  DiskArchiveSink,
} from '../sandbox-backend';
import { baseEnv, bwrapArgs, resolveImage, WORKSPACE } from './bwrap-args';
import { containerStatusesOf, execEnvFor, planViewOf, podLogFile, primaryNameOf, type PlanView } from './container-status';
import { buildPod, isPod, LaunchRefused, primaryLayout, sandboxFileToDiskPath, type PodPlanFields } from './containers';
import { detectCgroupMode, killQuietly, RunnerCgroups, runnerTreeName } from './cgroups';
import { portNotServed, sandboxNotFound, sandboxNotRunning } from './errors';
import { CallActivity } from './call-activity';
import { runExec, startExec } from './exec-client';
import { FileClient } from './file-client';
import { fromOffset, LogCursor, tailLines } from './log-file';
import { BASE_IMAGE, isSafeId, resolveOptions, type LocalBackendOptions, type ResolvedOptions } from './options';
import { connectSandboxPort } from './port-relay';
import { request } from './socket-io';
import { type EgressGrant } from './net/nft-ruleset';
import { ToolHost } from './net/tool-host';
import { SandboxNetworks, type SandboxNetHandle } from './net/sandbox-networks';
import { isOurSupervisor, pidAlive, readPid } from './pids';
import { SUPERVISOR_ENV, SupervisorZygote } from './supervisor-zygote';
import type { SupervisorPlan } from './supervisor-plan';
import { installSupervisor, SUPERVISOR_ENTRY } from './supervisor-files';
import { WarmSlots, type WarmSlot } from './warm-slots';
import { LOCAL_SPEC_FEATURES } from './spec-features';
import { execIdentityOf, localSecurityViolations, needsLowPorts } from './security-context';
import type { ImageStore } from './images/image-store';
import { createImageStore, IMAGE_DIGEST_FILE, imageSourceOf, withImageConfig } from './images/launch-image';
import { digestPinCheck } from './images/digest-pins';
import { ImagePullError } from './images/pull-error';
import { launchPullCredentials, withoutPullCredentials } from './images/launch-credentials';
import type { ImageSource } from './bwrap-args';

export { sandboxFileToDiskPath } from './containers';
import { freezeSandbox, movedDeadlineMs, pausedAtMs, thawSandbox } from './freezer';
import { readCgroupUsage } from './usage';
import { captureDisk } from './disk-snapshot';

/** What the backend remembers about one sandbox (rebuilt from the state directory after a restart). */
interface SandboxRecord {
  id: string;
  dir: string;
  /** The supervisor's socket in `dir` (every call on the sandbox connects to it). */
  socket: string;
  /** The exec daemon's own socket in `dir`, there while it runs (unary execs skip the supervisor). */
  execSocket: string;
  labels: Record<string, string>;
  state: SandboxState;
  startedAt: Date;
  deadline: Date;
  lastSeq: number;
  eventsPos: number;
  /** The primary's exit code, once an event carried it. */
  exitCode?: number;
  terminal: Promise<void>;
  resolveTerminal: () => void;
  supervisorPid?: number;
  poll?: NodeJS.Timeout;
  backstop?: NodeJS.Timeout;
  /** Its image is being pulled: no supervisor exists yet. */
  pulling?: boolean;
  /** The primary's exec environment from its plan (written once at launch), kept after the first read. */
  primaryEnv?: Record<string, string>;
  /** What calls read of its plan, kept from the launch (or the first read, once adopted). */
  plan?: PlanView;
}

interface WireEvent {
  seq: number;
  sandboxId?: string;
  state: SandboxState;
  reason?: SandboxStateReason;
  message?: string;
  exitCode?: number;
  at: number;
}

const DEFAULT_LIFETIME_SECONDS = 600;

function archName(): string {
  return process.arch === 'x64' ? 'amd64' : process.arch === 'arm64' ? 'arm64' : process.arch;
}

/**
 * Runs sandboxes on this machine with bubblewrap and cgroups.
 *
 * **Isolation level:** Linux namespaces (user, pid, mount, ipc, uts, network, cgroup), cgroup
 * limits, no capabilities, no new privileges and a seccomp deny-list. That is a shared kernel:
 * this backend is for development and single-machine use. Production isolation comes from the
 * Kubernetes backend's runtime classes (gVisor, Kata).
 *
 * Each sandbox has a detached supervisor process (its parent) that enforces the lifetime, captures
 * output and serves exec/file requests, so sandboxes survive a runner restart and are adopted by
 * `recover()`, while nothing outlives its lifetime.
 */
export class LocalBackend implements SandboxBackend {
  readonly kind = 'local' as const;
  private readonly o: ResolvedOptions;
  private readonly sandboxes = new Map<string, SandboxRecord>();
  private readonly listeners: ((e: BackendEvent) => void)[] = [];
  private cgroups?: RunnerCgroups;
  private zygote?: SupervisorZygote;
  private warm?: WarmSlots;
  private readonly net: SandboxNetworks;
  /** Runs the links' `ip` commands without forking the runner (see ToolHost). */
  private readonly tools: ToolHost;
  /** Calls on sandboxes being served: pre-built network links wait for them to pause. */
  private readonly activity = new CallActivity();
  private closed = false;
  private imageStore?: ImageStore;

  constructor(options: LocalBackendOptions) {
    if (!isSafeId(options.runnerId)) {
      throw new PaddockError('invalid_argument', `runnerId ${JSON.stringify(options.runnerId)} must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}`, {
        reason: 'PADDOCK_VALIDATION_FAILED',
        violations: [{ field: 'runnerId', rule: 'pattern', description: 'letters, digits, dot, underscore, dash; at most 128' }],
      });
    }
    this.o = resolveOptions(options);
    this.tools = new ToolHost(this.o.pythonPath);
    this.net = new SandboxNetworks({
      runnerId: this.o.runnerId,
      stateDir: this.o.stateDir,
      ipPath: this.o.ipPath,
      nftPath: this.o.nftPath,
      hostResolvConf: this.o.hostResolvConf,
      warmLinks: this.o.warmLinks,
      activity: this.activity,
      runTool: this.tools.run,
    });
  }

  get stateDir(): string {
    return this.o.stateDir;
  }

  /** Lazily prepares the state directory, the cgroup tree and the supervisor zygote. */
  private init(): RunnerCgroups {
    if (this.cgroups) return this.cgroups;
    // Nothing is set up again once closed: a late caller (a pull finishing after close) would
    // otherwise start a zygote that nobody stops.
    if (this.closed) throw new PaddockError('unavailable', 'the local backend is closed', { reason: 'CWSANDBOX_RUNNER_UNAVAILABLE' });
    const cg = cgroupsOf(this.o);
    // 0711: the sandbox user must traverse to its bind sources, but cannot list other sandboxes.
    mkdirSync(join(this.o.stateDir, 'sandboxes'), { recursive: true, mode: 0o711 });
    installSupervisor(this.o.stateDir);
    cg.ensureRunnerTree();
    this.cgroups = cg;
    this.zygote = new SupervisorZygote(
      this.o.pythonPath,
      this.scriptPath(),
      join(cg.supervisorsDir(), 'cgroup.procs'),
      join(this.o.stateDir, 'supervisors.log'),
      (line) => this.onSupervisorLine(line),
    );
    this.zygote.ensure();
    this.warm = new WarmSlots(cg, this.zygote, this.o.stateDir, this.o.warmSlots);
    return cg;
  }

  private scriptPath(): string {
    return join(this.o.stateDir, SUPERVISOR_ENTRY);
  }

  private sandboxDir(id: string): string {
    return join(this.o.stateDir, 'sandboxes', id);
  }

  capabilities(): RunnerCapabilities {
    // Egress leaves through the sandbox's own namespace and the runner's nftables table, which
    // enforce CIDR grants; without iproute2 and nftables nothing but loopback can be given.
    const egress = this.net.available();
    return {
      isolation: 'namespaces',
      egressRuleKinds: egress ? ['cidr'] : [],
      ingressRuleKinds: [],
      supportsEgress: egress,
      runtimeClasses: [],
      gpuTypes: [],
      // No device is passed into a bubblewrap sandbox: a GPU request is refused, never ignored.
      maxGpuCount: 0,
      architectures: [archName()],
      instanceTypes: [],
      // Scratch volumes are size-capped tmpfs mounts: disk and memory alike (both count against memory here).
      storageMedia: ['STORAGE_MEDIUM_DISK', 'STORAGE_MEDIUM_MEMORY'],
      supportsPrivileged: false,
      // A runner that pulls from registries runs any reference (a pull failure ends the sandbox
      // with its reason); the list then names no image, which the policy engine reads as "any".
      images: this.o.registry ? [] : [BASE_IMAGE, ...Object.keys(this.o.images), ...Object.keys(this.o.imageAliases)],
      // The built-in image is the default when neither the spec nor the policy names one.
      defaultImage: BASE_IMAGE,
      specFeatures: [...LOCAL_SPEC_FEATURES],
    };
  }

  launchViolations(resolved: ResolvedSandboxSpec): FieldViolation[] {
    return localSecurityViolations(resolved);
  }

  onEvent(listener: (e: BackendEvent) => void): void {
    this.listeners.push(listener);
  }

  private publish(e: BackendEvent): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch {
        // a listener's failure must not break event delivery to the others
      }
    }
  }

  private newRecord(id: string, labels: Record<string, string>, startedAt: Date, deadline: Date): SandboxRecord {
    let resolveTerminal!: () => void;
    const terminal = new Promise<void>((r) => (resolveTerminal = r));
    const dir = this.sandboxDir(id);
    const rec: SandboxRecord = {
      id,
      dir,
      socket: join(dir, 'sup.sock'),
      execSocket: join(dir, 'exec.sock'),
      labels,
      state: 'STATE_PENDING',
      startedAt,
      deadline,
      lastSeq: 0,
      eventsPos: 0,
      terminal,
      resolveTerminal,
    };
    this.sandboxes.set(id, rec);
    return rec;
  }

  /** Appends an event the runner itself decides (CREATING, IMAGE_NOT_FOUND...) to the sandbox's event file. */
  private recordEvent(rec: SandboxRecord, ev: Omit<WireEvent, 'seq' | 'at'>): void {
    const wire: WireEvent = { seq: rec.lastSeq + 1, at: Date.now() / 1000, ...ev };
    try {
      appendFileSync(join(rec.dir, 'events.jsonl'), `${JSON.stringify(wire)}\n`);
    } catch {
      // the directory may already be gone (reaped); the in-memory event still goes out
    }
    this.apply(rec, wire);
  }

  private apply(rec: SandboxRecord, ev: WireEvent, fromFile = false): void {
    if (ev.seq <= rec.lastSeq || isTerminalSandboxState(rec.state)) return;
    // A line lost on the shared pipe (the supervisor drops rather than blocks): the file has it.
    if (!fromFile && ev.seq > rec.lastSeq + 1) this.catchUp(rec);
    if (ev.seq <= rec.lastSeq) return;
    rec.lastSeq = ev.seq;
    rec.state = ev.state;
    const out: BackendEvent = { sandboxId: rec.id, state: ev.state, at: new Date(ev.at * 1000) };
    if (ev.reason) out.reason = ev.reason;
    if (ev.message) out.message = ev.message;
    if (ev.exitCode !== undefined && ev.exitCode !== null) {
      out.exitCode = ev.exitCode;
      rec.exitCode = ev.exitCode;
    }
    this.publish(out);
    if (isTerminalSandboxState(ev.state)) {
      if (rec.poll) clearInterval(rec.poll);
      this.disarmBackstop(rec);
      rec.resolveTerminal();
      // The sandbox is over: its link goes now (a leftover process in the namespace loses egress).
      void this.net.teardown(rec.id).catch(() => undefined);
    }
  }

  /** Reads the sandbox's event file from where we left off (the supervisor appends to it). */
  private catchUp(rec: SandboxRecord): void {
    let text: string;
    try {
      text = readFileSync(join(rec.dir, 'events.jsonl'), 'utf8');
    } catch {
      return;
    }
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        this.apply(rec, JSON.parse(line) as WireEvent, true);
      } catch {
        // a torn last line is read again next time
      }
    }
  }

  async launch(spec: LaunchSpec): Promise<void> {
    if (this.closed) throw new PaddockError('unavailable', 'the local backend is closed', { reason: 'CWSANDBOX_RUNNER_UNAVAILABLE' });
    if (!isSafeId(spec.sandboxId)) {
      throw new PaddockError('invalid_argument', `sandboxId ${JSON.stringify(spec.sandboxId)} must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}`, {
        reason: 'CWSANDBOX_INVALID_REQUEST',
        violations: [{ field: 'sandboxId', rule: 'pattern', description: 'letters, digits, dot, underscore, dash; at most 128' }],
      });
    }
    if (this.sandboxes.has(spec.sandboxId) || existsSync(this.sandboxDir(spec.sandboxId))) return;
    const cg = this.init();
    const lifetime = spec.lifetimeSeconds > 0 ? spec.lifetimeSeconds : DEFAULT_LIFETIME_SECONDS;
    const startedAt = new Date();
    const deadline = new Date(startedAt.getTime() + lifetime * 1000);
    const rec = this.newRecord(spec.sandboxId, spec.labels, startedAt, deadline);
    mkdirSync(rec.dir, { recursive: true, mode: 0o711 });
    writeFileSync(
      join(rec.dir, 'meta.json'),
      JSON.stringify({ sandboxId: spec.sandboxId, labels: spec.labels, startedAt: startedAt.toISOString(), deadline: deadline.toISOString() }),
    );
    this.recordEvent(rec, { state: 'STATE_CREATING' });

    const undelivered = (spec.secretEnvNames ?? []).filter((n) => !(n in spec.env));
    if (undelivered.length) {
      this.recordEvent(rec, { state: 'STATE_FAILED', reason: 'FAILED_TO_START', message: `secret env vars were not delivered: ${undelivered.join(', ')}` });
      return;
    }
    const image = resolveImage(this.o.imageAliases[spec.image] ?? spec.image, this.o.images);
    if (!image && this.o.registry) {
      // Creation is asynchronous: the pull runs after launch returns, and ends in RUNNING or FAILED.
      rec.pulling = true;
      this.armBackstop(rec);
      void this.pullAndStart(rec, spec, cg, deadline, lifetime);
      return;
    }
    if (!image) {
      this.recordEvent(rec, {
        state: 'STATE_FAILED',
        reason: 'IMAGE_NOT_FOUND',
        message: `image ${JSON.stringify(spec.image)} is not known to local runner ${this.o.runnerId} (known: ${this.capabilities().images.join(', ')})`,
      });
      return;
    }
    await this.start(rec, spec, cg, image, deadline, lifetime);
  }

  /** Pulls the spec's image (or takes it from the cache), then starts the sandbox on it. */
  private async pullAndStart(rec: SandboxRecord, spec: LaunchSpec, cg: RunnerCgroups, deadline: Date, lifetime: number): Promise<void> {
    let stored;
    try {
      stored = await (this.imageCache() as ImageStore).ensure(spec.image, (message) => {
        if (rec.state === 'STATE_CREATING') this.recordEvent(rec, { state: 'STATE_CREATING', message });
      }, digestPinCheck(spec), launchPullCredentials(spec));
    } catch (e) {
      const reason = e instanceof ImagePullError ? e.reason : 'FAILED_TO_START';
      this.recordEvent(rec, { state: 'STATE_FAILED', reason, message: `image ${JSON.stringify(spec.image)}: ${(e as Error).message}` });
      return;
    } finally {
      rec.pulling = false;
    }
    // Stopped (and reaped) while its image was being pulled.
    if (this.closed || isTerminalSandboxState(rec.state) || this.sandboxes.get(rec.id) !== rec) return;
    writeFileSync(join(rec.dir, IMAGE_DIGEST_FILE), stored.digest);
    await this.start(rec, withImageConfig(withoutPullCredentials(spec), stored), cg, imageSourceOf(stored), deadline, lifetime);
  }

  private async start(rec: SandboxRecord, spec: LaunchSpec, cg: RunnerCgroups, image: ImageSource, deadline: Date, lifetime: number): Promise<void> {
    const files: SupervisorPlan['files'] = [];
    for (const f of spec.files) {
      const rel = sandboxFileToDiskPath(f.path);
      if (!rel) {
        this.recordEvent(rec, {
          state: 'STATE_FAILED',
          reason: 'FAILED_TO_START',
          message: `files[].path ${JSON.stringify(f.path)} must be an absolute path under /workspace or /tmp`,
        });
        return;
      }
      files.push({ rel, b64: f.content.toString('base64') });
    }
    try {
      const net = await this.setupNetwork(spec);
      const pod = await this.podOf(rec, spec, net);
      if (!pod) return;
      files.push(...pod.files);
      // A warm slot's launcher waits in the sandbox's cgroups, which the supervisor empties after
      // each init container: a sandbox with init containers creates its own.
      const slot = (spec.initContainers?.length ?? 0) > 0 ? undefined : await this.takeWarmSlot(cg, spec.sandboxId);
      const cpuSteady = slot ? cg.applyLimits(spec.sandboxId, spec) : cg.create(spec.sandboxId, spec);
      const plan: SupervisorPlan = {
        sandboxId: spec.sandboxId,
        dir: rec.dir,
        uid: this.o.sandboxUid,
        gid: this.o.sandboxGid,
        ...execIdentityOf(spec.securityContext, image),
        ...(needsLowPorts(spec) ? { lowPorts: true } : {}),
        bwrapExe: this.o.bwrapPath,
        bwrap: bwrapArgs(spec, image, join(rec.dir, 'disk'), net, isPod(spec) ? primaryLayout(spec, pod.primaryMounts) : undefined),
        execEnv: baseEnv(spec),
        execCwd: spec.workingDir || WORKSPACE,
        cgroupProcs: cg.procsFiles(spec.sandboxId),
        cgroupDirs: cg.boxDirs(spec.sandboxId),
        ...(cg.killFile(spec.sandboxId) ? { cgroupKill: cg.killFile(spec.sandboxId) } : {}),
        oomFile: cg.oomFile(spec.sandboxId),
        cpuSteady,
        nofile: spec.openFilesMax,
        deadlineMs: deadline.getTime(),
        lifetimeSeconds: lifetime,
        memoryBytes: spec.memoryBytes,
        termGraceMs: this.o.lifetimeGraceMs,
        diskBytes: spec.diskBytes,
        logCapBytes: this.o.logCapBytes,
        files,
        ...(net ? { netns: net.netnsPath } : {}),
        // Named even alone, so `container: <its name>` reaches it.
        ...(spec.primaryName ? { primaryName: spec.primaryName } : {}),
        ...(spec.servicePorts?.length ? { servicePorts: spec.servicePorts } : {}),
        ...pod.fields,
        ...(spec.restoreArchive ? { restoreArchive: spec.restoreArchive } : {}),
      };
      const planPath = join(rec.dir, 'plan.json');
      writeFileSync(planPath, JSON.stringify(plan), { mode: 0o600 });
      rec.plan = planViewOf(plan);
      // A slot's supervisor that is gone took its launcher with it: the plan is then started the
      // ordinary way, in the same (renamed, limited) cgroups.
      if (!(slot && (await (this.warm as WarmSlots).handOff(slot, planPath)))) (this.zygote as SupervisorZygote).start(planPath);
      this.watch(rec, false);
      setImmediate(() => this.refillWarm());
    } catch (e) {
      this.recordEvent(rec, { state: 'STATE_FAILED', reason: 'FAILED_TO_START', message: `launch failed: ${(e as Error).message}` });
      await cg.killAndRemove(spec.sandboxId);
      await this.net.teardown(spec.sandboxId).catch(() => undefined);
      return;
    }
    this.armBackstop(rec);
  }

  /**
   * The plan fields of a sandbox's other containers, volumes and probe; undefined when the launch
   * was refused (the sandbox has then failed, naming the field).
   */
  private async podOf(
    rec: SandboxRecord,
    spec: LaunchSpec,
    net: SandboxNetHandle | undefined,
  ): Promise<{ fields: PodPlanFields; primaryMounts: string[]; files: SupervisorPlan['files'] } | undefined> {
    if (!isPod(spec)) return { fields: {}, primaryMounts: [], files: [] };
    try {
      return buildPod({
        spec,
        sandboxDir: rec.dir,
        diskDir: join(rec.dir, 'disk'),
        net,
        resolveImage: (name) => resolveImage(this.o.imageAliases[name] ?? name, this.o.images),
        knownImages: () => this.capabilities().images,
      });
    } catch (e) {
      if (!(e instanceof LaunchRefused)) throw e;
      this.recordEvent(rec, { state: 'STATE_FAILED', reason: e.reason, message: e.message });
      await this.net.teardown(spec.sandboxId).catch(() => undefined);
      return undefined;
    }
  }

  /**
   * Unrestricted egress (`network: 'host'`) or CIDR grants get the sandbox's own namespace and
   * link; no egress keeps bwrap's own loopback-only namespace (nothing to set up).
   */
  private async setupNetwork(spec: LaunchSpec): Promise<SandboxNetHandle | undefined> {
    const egress: EgressGrant | undefined =
      spec.network === 'host' ? { kind: 'unrestricted' } : spec.egressCidrs && spec.egressCidrs.length > 0 ? { kind: 'cidrs', rules: spec.egressCidrs } : undefined;
    if (!egress) return undefined;
    if (!this.net.available()) throw new Error(`egress needs ${this.o.ipPath} and ${this.o.nftPath} (apt-get install iproute2 nftables)`);
    return this.net.setup(spec.sandboxId, egress);
  }

  /** Events of every supervisor arrive on the zygote's shared stdout, one JSON line each. */
  private onSupervisorLine(line: string): void {
    try {
      const ev = JSON.parse(line) as WireEvent;
      const rec = ev.sandboxId ? this.sandboxes.get(ev.sandboxId) : undefined;
      if (rec) this.apply(rec, ev);
    } catch {
      // a malformed line is ignored: the event file is the record of truth
    }
  }

  /**
   * Watches a sandbox's supervisor: liveness always (a supervisor that dies without a terminal
   * event is cleaned up after), and the event file too for adopted sandboxes, whose events no
   * longer reach us through the zygote.
   */
  private watch(rec: SandboxRecord, pollEvents: boolean): void {
    const since = Date.now();
    rec.poll = setInterval(() => {
      if (pollEvents || rec.state === 'STATE_CREATING') this.catchUp(rec);
      if (isTerminalSandboxState(rec.state)) {
        clearInterval(rec.poll);
        return;
      }
      rec.supervisorPid ??= readPid(join(rec.dir, 'supervisor.pid'));
      const lost = rec.supervisorPid === undefined ? Date.now() - since > 30_000 : !pidAlive(rec.supervisorPid);
      if (lost) {
        clearInterval(rec.poll);
        void this.onSupervisorGone(rec);
      }
    }, pollEvents ? 100 : 250);
    rec.poll.unref();
  }

  /** The supervisor exited: read its last events; if it died without a terminal event, clean up after it. */
  private async onSupervisorGone(rec: SandboxRecord): Promise<void> {
    this.catchUp(rec);
    if (isTerminalSandboxState(rec.state) || this.closed) return;
    if (rec.supervisorPid !== undefined && pidAlive(rec.supervisorPid)) return;
    await this.cleanupResources(rec.id);
    this.recordEvent(rec, { state: 'STATE_FAILED', reason: 'RUNNER_LOST', message: 'the sandbox supervisor exited unexpectedly' });
  }

  /**
   * The runner-side lifetime enforcement (the supervisor's own deadline is the primary one): if the
   * sandbox is still not terminal well past its deadline, the runner kills it itself.
   */
  /** Cancels the backstop, so that `armBackstop` can set a new one (a resume moves the deadline). */
  private disarmBackstop(rec: SandboxRecord): void {
    if (rec.backstop) clearTimeout(rec.backstop);
    rec.backstop = undefined;
  }

  private armBackstop(rec: SandboxRecord): void {
    if (rec.backstop) return;
    if (rec.state === 'STATE_PAUSED') return;
    const due = rec.deadline.getTime() + this.o.lifetimeGraceMs + 3000 - Date.now();
    rec.backstop = setTimeout(() => {
      if (!isTerminalSandboxState(rec.state)) void this.reap(rec.id, 'LIFETIME_EXPIRED').catch(() => undefined);
    }, Math.max(0, Math.min(due, 2 ** 31 - 1)));
    rec.backstop.unref();
  }

  private record(id: string): SandboxRecord {
    const rec = this.sandboxes.get(id);
    if (!rec) throw sandboxNotFound(id);
    return rec;
  }

  private runningRecord(id: string): SandboxRecord {
    const rec = this.record(id);
    if (rec.state !== 'STATE_RUNNING') throw sandboxNotRunning(id, rec.state);
    return rec;
  }

  async stop(sandboxId: string, graceSeconds: number, reason: SandboxStateReason): Promise<void> {
    const rec = this.record(sandboxId);
    if (isTerminalSandboxState(rec.state)) return;
    // No supervisor exists while the image is pulled: the sandbox simply ends (the pull, shared
    // with other sandboxes, goes on and fills the cache).
    if (rec.pulling) return this.reap(sandboxId, reason);
    // Seen by a supervisor that has not opened its socket yet; it then never starts the sandbox.
    if (!existsSync(join(rec.dir, 'stop-reason'))) writeFileSync(join(rec.dir, 'stop-reason'), reason);
    // A sandbox launched a moment ago may not have its supervisor yet: give the zygote time to fork it.
    for (let i = 0; rec.supervisorPid === undefined && i < 200; i++) {
      rec.supervisorPid = readPid(join(rec.dir, 'supervisor.pid'));
      if (rec.supervisorPid === undefined) await delay(25);
    }
    try {
      await request(rec.socket, { op: 'stop', grace: Math.max(0, graceSeconds), reason });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const supervisorAlive = rec.supervisorPid !== undefined && pidAlive(rec.supervisorPid);
      if (code !== 'ENOENT' || !supervisorAlive) {
        // A supervisor that answers a stop by exiting (during an init container, say) can close
        // its socket before the reply arrives: its end is then observed as after a reply, and the
        // sandbox stays known (logs, statuses) instead of being reaped and forgotten.
        if (!supervisorAlive && (await Promise.race([rec.terminal.then(() => true), delay(1_000).then(() => false)]))) return;
        await this.reap(sandboxId, reason);
        return;
      }
    }
    const limit = (Math.max(0, graceSeconds) + 15) * 1000;
    const timedOut = await Promise.race([rec.terminal.then(() => false), delay(limit).then(() => true)]);
    if (timedOut) await this.reap(sandboxId, reason);
  }

  async exec(sandboxId: string, req: ExecRequest): Promise<ExecResult> {
    const rec = this.runningRecord(sandboxId);
    requireArgv(req.argv);
    return this.served(() => runExec({ supervisor: rec.socket, daemon: rec.execSocket }, { ...req, env: { ...this.planEnv(rec, req.container), ...(req.env ?? {}) } }, () => sandboxNotRunning(sandboxId, rec.state)));
  }

  async execStream(sandboxId: string, req: ExecStreamRequest): Promise<ExecProcess> {
    const rec = this.runningRecord(sandboxId);
    requireArgv(req.argv);
    const plan = this.planEnv(rec, req.container);
    // Its start only: a stream may stay open for hours, which must not hold background work back.
    return this.served(() => startExec(rec.socket, { ...req, env: { ...plan, ...(req.env ?? {}) } }, () => sandboxNotRunning(sandboxId, rec.state)));
  }

  /** Runs a call on a sandbox as one the backend's background work waits for (CallActivity). */
  private async served<T>(call: () => Promise<T>): Promise<T> {
    const end = this.activity.begin();
    try {
      return await call();
    } finally {
      end();
    }
  }

  /**
   * Every create's reply and every get read it (containerStatuses): read and parsed (files and
   * all) once per sandbox, not per call. The plan is written once per launch and never changed,
   * so nothing invalidates it; none yet (a launch still pulling its image) is not kept.
   */
  private readPlan(rec: SandboxRecord): PlanView | undefined {
    if (rec.plan) return rec.plan;
    try {
      rec.plan = planViewOf(JSON.parse(readFileSync(join(rec.dir, 'plan.json'), 'utf8')) as SupervisorPlan);
      return rec.plan;
    } catch {
      return undefined;
    }
  }

  /** The environment of an exec in `container` (absent = the primary); an unknown name is refused by field. */
  private planEnv(rec: SandboxRecord, container: string | undefined): Record<string, string> {
    // Every exec needs it: read and parsed from the plan (files and all) once, not per command.
    if (container === undefined && rec.primaryEnv) return rec.primaryEnv;
    const plan = this.readPlan(rec);
    if (!plan) return {};
    const env = execEnvFor(plan, container);
    if (container === undefined) rec.primaryEnv = env;
    return env;
  }

  async connectPort(sandboxId: string, port: number): Promise<Duplex> {
    const rec = this.runningRecord(sandboxId);
    // Only what the spec made public is relayed, even if a caller above forgot to check.
    if (!(this.readPlan(rec)?.servicePorts ?? []).includes(port)) throw portNotServed(sandboxId, port);
    return connectSandboxPort(rec.socket, sandboxId, port, () => sandboxNotRunning(sandboxId, rec.state));
  }

  containerStatuses(sandboxId: string): ContainerStatus[] | undefined {
    const rec = this.sandboxes.get(sandboxId);
    const plan = rec ? this.readPlan(rec) : undefined;
    if (!rec || !plan) return undefined;
    const state = rec.state === 'STATE_RUNNING' || rec.state === 'STATE_TERMINATING' ? 'running' : isTerminalSandboxState(rec.state) ? 'terminated' : 'waiting';
    return containerStatusesOf(rec.dir, plan, { name: primaryNameOf(plan), state, ...(rec.exitCode !== undefined ? { exitCode: rec.exitCode } : {}), restartCount: 0 });
  }

  private files(id: string): FileClient {
    const rec = this.runningRecord(id);
    return new FileClient(rec.socket, id);
  }

  async readFile(sandboxId: string, path: string): Promise<Readable> {
    return this.files(sandboxId).read(path);
  }

  async writeFile(sandboxId: string, path: string, content: Readable | Buffer, mode?: number): Promise<void> {
    await this.served(() => this.files(sandboxId).write(path, content, mode));
  }

  async listDir(sandboxId: string, path: string): Promise<FileStat[]> {
    return this.served(() => this.files(sandboxId).list(path));
  }

  async stat(sandboxId: string, path: string): Promise<FileStat> {
    return this.files(sandboxId).stat(path);
  }

  async remove(sandboxId: string, path: string, recursive: boolean): Promise<void> {
    return this.served(() => this.files(sandboxId).remove(path, recursive));
  }

  async pause(sandboxId: string, reason: SandboxStateReason = 'PAUSED_BY_USER'): Promise<void> {
    const rec = this.record(sandboxId);
    if (rec.state === 'STATE_PAUSED') return;
    this.runningRecord(sandboxId);
    await freezeSandbox(rec.socket, sandboxId, reason);
    // The supervisor no longer counts the lifetime; neither does the runner's backstop.
    this.disarmBackstop(rec);
    this.catchUp(rec);
  }

  async resume(sandboxId: string): Promise<void> {
    const rec = this.record(sandboxId);
    if (rec.state !== 'STATE_PAUSED') return;
    const r = await thawSandbox(rec.socket, sandboxId);
    if (r.deadlineMs !== undefined) rec.deadline = new Date(r.deadlineMs);
    this.catchUp(rec);
    this.disarmBackstop(rec);
    this.armBackstop(rec);
  }

  async snapshotDisk(sandboxId: string, out: DiskArchiveSink): Promise<{ frozenMs: number }> {
    const rec = this.record(sandboxId);
    if (rec.state !== 'STATE_PAUSED') this.runningRecord(sandboxId);
    return captureDisk(rec.socket, sandboxId, join(rec.dir, 'disk'), out);
  }

  usage(sandboxId: string): CgroupUsage | undefined {
    const rec = this.sandboxes.get(sandboxId);
    if (!rec || isTerminalSandboxState(rec.state) || !this.cgroups) return undefined;
    return readCgroupUsage(this.cgroups, sandboxId);
  }

  async deleteLogs(sandboxId: string): Promise<void> {
    // The supervisor has exited (the sandbox ended): nothing appends to the file any more.
    const dir = this.record(sandboxId).dir;
    for (const f of readdirSync(dir)) if (f === 'log' || f.startsWith('log.')) rmSync(join(dir, f), { force: true });
  }

  async *logs(sandboxId: string, req: LogRequest): AsyncIterable<LogChunk> {
    const rec = this.record(sandboxId);
    const cursor = new LogCursor(podLogFile(rec.dir, req.container ? this.readPlan(rec) : undefined, req.container));
    let chunks = cursor.readNew();
    if (req.fromOffset !== undefined) chunks = fromOffset(chunks, req.fromOffset);
    if (req.sinceTime) {
      const since = req.sinceTime.getTime();
      chunks = chunks.filter((c) => c.time.getTime() >= since);
    }
    if (req.tailLines !== undefined) chunks = tailLines(chunks, req.tailLines);
    for (const c of chunks) {
      if (req.signal?.aborted) return;
      yield c;
    }
    if (!req.follow) return;
    for (;;) {
      if (req.signal?.aborted) return;
      const done = isTerminalSandboxState(rec.state);
      for (const c of fromOffset(cursor.readNew(), req.fromOffset ?? 0)) {
        if (req.signal?.aborted) return;
        yield c;
      }
      if (done) return;
      await Promise.race([rec.terminal, delay(50, req.signal)]);
    }
  }

  /** Lists live sandboxes to adopt; reaps dead ones and anything without state. */
  async recover(): Promise<RecoveredSandbox[]> {
    const cg = this.init();
    const root = join(this.o.stateDir, 'sandboxes');
    const out: RecoveredSandbox[] = [];
    const alive = new Set<string>();
    for (const id of readdirSync(root)) {
      if (this.sandboxes.has(id)) {
        const rec = this.sandboxes.get(id) as SandboxRecord;
        if (!isTerminalSandboxState(rec.state)) out.push(this.toRecovered(rec));
        alive.add(id);
        continue;
      }
      const dir = this.sandboxDir(id);
      let meta: { labels: Record<string, string>; startedAt: string; deadline: string };
      try {
        meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as typeof meta;
      } catch {
        await this.cleanupResources(id);
        continue;
      }
      const rec = this.newRecord(id, meta.labels, new Date(meta.startedAt), new Date(movedDeadlineMs(dir) ?? meta.deadline));
      this.catchUp(rec);
      // Paused: the lifetime has not run since the pause, so what is left of it starts again now.
      const pausedAt = rec.state === 'STATE_PAUSED' ? pausedAtMs(dir) : undefined;
      if (pausedAt !== undefined) rec.deadline = new Date(rec.deadline.getTime() + Math.max(0, Date.now() - pausedAt));
      const pid = readPid(join(dir, 'supervisor.pid'));
      rec.supervisorPid = pid;
      const supervisorAlive = pid !== undefined && isOurSupervisor(pid, this.scriptPath());
      if (supervisorAlive && !isTerminalSandboxState(rec.state)) {
        alive.add(id);
        this.adopt(rec);
        out.push(this.toRecovered(rec));
        continue;
      }
      // Dead: its supervisor is gone (or it already ended). Release everything, report why.
      await this.reap(id, 'RUNNER_LOST');
    }
    // Cgroups that have no state directory (warm slots of a previous runner among them), and
    // supervisors of a previous runner (its zygote).
    for (const id of cg.listSandboxes()) {
      if (!alive.has(id) && !this.sandboxes.has(id)) await cg.killAndRemove(id);
    }
    const warmIds = this.warm?.ids() ?? new Set<string>();
    for (const id of cg.listWarm()) {
      if (!warmIds.has(id)) await cg.killAndRemove(id);
    }
    const ours = new Set([this.zygote?.pid() ?? -1, ...(this.warm?.pids() ?? []), ...[...this.sandboxes.values()].map((r) => r.supervisorPid ?? -1)]);
    for (const pid of cg.supervisorPids()) {
      if (!ours.has(pid)) killQuietly(pid, 'SIGKILL');
    }
    this.warm?.removeStale();
    if (this.net.available()) await this.net.sweep(alive);
    this.refillWarm();
    return out;
  }

  private toRecovered(rec: SandboxRecord): RecoveredSandbox {
    return { sandboxId: rec.id, labels: rec.labels, state: rec.state, startedAt: rec.startedAt, deadline: rec.deadline };
  }

  /** Follows an adopted sandbox by polling its event file and its supervisor's liveness. */
  private adopt(rec: SandboxRecord): void {
    this.watch(rec, true);
    this.armBackstop(rec);
  }

  async reap(sandboxId: string, reason: SandboxStateReason): Promise<void> {
    const rec = this.sandboxes.get(sandboxId);
    if (rec && !isTerminalSandboxState(rec.state) && rec.supervisorPid !== undefined && pidAlive(rec.supervisorPid)) {
      try {
        if (!existsSync(join(rec.dir, 'stop-reason'))) writeFileSync(join(rec.dir, 'stop-reason'), reason);
        await request(rec.socket, { op: 'stop', grace: 0, reason });
        await Promise.race([rec.terminal, delay(10_000)]);
      } catch {
        // the supervisor is not answering: it is killed below
      }
    }
    if (rec) {
      if (rec.poll) clearInterval(rec.poll);
      this.disarmBackstop(rec);
      this.catchUp(rec);
      if (!isTerminalSandboxState(rec.state)) {
        this.recordEvent(rec, { state: 'STATE_FAILED', reason, message: `reaped by the runner (${reason})` });
      }
    }
    await this.cleanupResources(sandboxId);
    this.sandboxes.delete(sandboxId);
  }

  /** Kills the supervisor and every process of the sandbox, removes its cgroups, tmpfs and state. */
  private async cleanupResources(id: string): Promise<void> {
    const cg = this.init();
    const dir = this.sandboxDir(id);
    const pid = readPid(join(dir, 'supervisor.pid'));
    if (pid !== undefined && isOurSupervisor(pid, this.scriptPath())) {
      killQuietly(pid, 'SIGKILL');
      const until = Date.now() + 5000;
      while (pidAlive(pid) && Date.now() < until) await delay(5);
    }
    await cg.killAndRemove(id);
    await this.net.teardown(id);
    const disk = join(dir, 'disk');
    if (isMountPoint(disk)) spawnSync('umount', ['-l', disk], { env: SUPERVISOR_ENV });
    rmSync(dir, { recursive: true, force: true });
  }

  /** A warm slot whose cgroups now carry the sandbox's name, or undefined (the launch then creates its own). */
  private async takeWarmSlot(cg: RunnerCgroups, sandboxId: string): Promise<WarmSlot | undefined> {
    const slot = this.warm?.take();
    if (!slot) return undefined;
    try {
      cg.rename(slot.id, sandboxId);
      return slot;
    } catch {
      // A slot whose cgroups cannot be taken over is dropped; the launch goes the ordinary way.
      await cg.killAndRemove(slot.id);
      return undefined;
    }
  }

  private refillWarm(): void {
    if (this.closed) return;
    try {
      this.warm?.refill();
    } catch {
      // a full disk or a closed zygote: launches simply take the ordinary path
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.zygote?.close();
    await this.warm?.dispose();
    for (const rec of this.sandboxes.values()) {
      if (rec.poll) clearInterval(rec.poll);
      this.disarmBackstop(rec);
    }
    // A runner that leaves no sandbox behind (a decommission, a test) leaves no cgroup tree either:
    // trees are per installation, so nothing else would ever reuse or remove it.
    const cg = this.cgroups;
    if (cg && cg.listSandboxes().length === 0) {
      const until = Date.now() + 2000;
      while (cg.supervisorPids().length > 0 && Date.now() < until) await delay(10);
      // With no sandbox left, a supervisor still here serves nothing (one that lost its sandbox
      // in a race with the teardown): it would outlive the runner holding the tree. End it.
      for (const pid of cg.supervisorPids()) killQuietly(pid, 'SIGKILL');
      const killed = Date.now() + 2000;
      while (cg.supervisorPids().length > 0 && Date.now() < killed) await delay(10);
      cg.removeRunnerTree();
    }
    // Links of sandboxes that outlive the runner stay (they are adopted later); an idle runner leaves no table.
    await Promise.all([...this.sandboxes.values()].filter((r) => isTerminalSandboxState(r.state)).map((r) => this.net.teardown(r.id)));
    await this.net.dispose().catch(() => undefined);
    this.tools.close();
  }

  /** Test and operator helper: the cache of pulled images (undefined when pulls are off). */
  imageCache(): ImageStore | undefined {
    if (this.o.registry) this.imageStore ??= createImageStore(this.o);
    return this.imageStore;
  }

  /** Test and operator helper: this runner's network names (table, veth prefix, link block). */
  networks(): SandboxNetworks {
    return this.net;
  }

  /** Test and operator helper: the cgroup tree of this runner (e.g. to check that nothing is left). */
  cgroupTree(): RunnerCgroups {
    return this.init();
  }
}

/** The cgroup tree of a runner's backend, without starting anything (tests, operators' checks). */
export function runnerCgroupsOf(options: LocalBackendOptions): RunnerCgroups {
  return cgroupsOf(resolveOptions(options));
}

function cgroupsOf(o: ResolvedOptions): RunnerCgroups {
  const mode = detectCgroupMode(o.cgroupRoot);
  if (!mode) {
    throw new PaddockError('failed_precondition', `no usable cgroup hierarchy under ${o.cgroupRoot} (need cgroup v2, or v1 cpu, memory and pids)`, {
      reason: 'CWSANDBOX_INTERNAL',
    });
  }
  return new RunnerCgroups(mode, o.cgroupRoot, runnerTreeName(o.runnerId, o.stateDir));
}

function requireArgv(argv: string[]): void {
  if (argv.length === 0) {
    throw new PaddockError('invalid_argument', 'argv must name a command', {
      reason: 'CWSANDBOX_INVALID_REQUEST',
      violations: [{ field: 'argv', rule: 'min_items', description: 'at least one element' }],
    });
  }
}

function isMountPoint(path: string): boolean {
  try {
    return readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .some((l) => l.split(' ')[4] === path);
  } catch {
    return false;
  }
}

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * A kubelet stand-in for every node in the store: runs each container's `command` as a local
 * process (no image, no isolation), reports phases and container states like the real kubelet,
 * enforces `activeDeadlineSeconds`, keeps logs, and runs `exec` sessions.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { badRequest, notFound } from '../store/errors';
import { mustFindByKind } from '../store/resources';
import type { ObjectStore, StoreEvent } from '../store/store';
import { isRecord, nowTimestamp, type Condition, type Container, type KubeObject, type PodSpec } from '../types';
import { LogBuffer } from './log-buffer';

export interface KubeletOptions {
  /** Run the kubelet stand-in at all (default true). */
  enabled?: boolean;
  /** Images that fail to pull: ErrImagePull, then ImagePullBackOff (default /doesnotexist/). */
  imagePullFailure?: RegExp;
  /** Images whose container exits 1 at once, every time: CrashLoopBackOff (default /crashloop/). */
  crashLoopImage?: RegExp;
  /** Base of the restart and image-pull back-off (default 200 ms; the real kubelet starts at 10 s). */
  backoffMs?: number;
  /** Cap on the SIGTERM → SIGKILL wait when a pod is deleted (default 2000 ms). */
  terminationGraceCapMs?: number;
  /** Where pod working directories go (default a fresh directory under the OS tmpdir). */
  workRoot?: string;
  /** Log bytes kept per container (default 10 MiB). */
  logLimitBytes?: number;
}

type ContainerState =
  | { state: 'waiting'; reason: string; message?: string }
  | { state: 'running'; startedAt: string }
  | { state: 'terminated'; exitCode: number; reason: string; message?: string; startedAt?: string; finishedAt: string; signal?: number };

interface ContainerRuntime {
  spec: Container;
  init: boolean;
  current: ContainerState;
  last?: ContainerState;
  restartCount: number;
  proc?: ChildProcess;
  log: LogBuffer;
  /** Output of the previous instance (`previous=true`), as the kubelet keeps one old log file. */
  previousLog?: LogBuffer;
  restartTimer?: NodeJS.Timeout;
}

interface PodRuntime {
  uid: string;
  namespace: string;
  name: string;
  dir: string;
  podIP: string;
  startTime: string;
  containers: Map<string, ContainerRuntime>;
  deadlineTimer?: NodeJS.Timeout;
  phaseOverride?: { phase: 'Failed'; reason: string; message: string };
  terminating: boolean;
  stopped: boolean;
  initDone: boolean;
}

const SIGNALS: Record<string, number> = { SIGTERM: 15, SIGKILL: 9, SIGINT: 2, SIGHUP: 1 };

/**
 * Container processes run in their own process groups, so they would outlive a test process that
 * dies without calling close(); kill whatever is left when this process exits.
 */
const liveGroups = new Set<number>();
let exitHookInstalled = false;
function trackGroup(pid: number): void {
  liveGroups.add(pid);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const g of liveGroups) {
      try {
        process.kill(-g, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

export class Kubelet {
  private readonly pods = new Map<string, PodRuntime>();
  private readonly pending = new Set<string>();
  private readonly statusDirty = new Set<string>();
  private nextIp = 2;
  private readonly podType = mustFindByKind('v1', 'Pod');
  private readonly nodeType = mustFindByKind('v1', 'Node');
  private readonly secretType = mustFindByKind('v1', 'Secret');
  private readonly opts: Required<Omit<KubeletOptions, 'enabled'>>;
  private readonly unsubscribe: () => void;
  private closed = false;

  constructor(
    private readonly store: ObjectStore,
    options: KubeletOptions = {},
  ) {
    this.opts = {
      imagePullFailure: options.imagePullFailure ?? /doesnotexist/,
      crashLoopImage: options.crashLoopImage ?? /crashloop/,
      backoffMs: options.backoffMs ?? 200,
      terminationGraceCapMs: options.terminationGraceCapMs ?? 2000,
      workRoot: options.workRoot ?? join(tmpdir(), `k8s-testserver-${process.pid}-${Date.now().toString(36)}`),
      logLimitBytes: options.logLimitBytes ?? 10 * 1024 * 1024,
    };
    this.unsubscribe = store.subscribe((e) => this.onEvent(e));
    // Pods deleted while bound to a node terminate gracefully: the kubelet finishes the delete.
    store.gracefulDeletion = (r, obj, opts) => {
      if (r.kind !== 'Pod' || r.group !== '') return undefined;
      const spec = obj.spec as PodSpec;
      if (!spec.nodeName || opts.gracePeriodSeconds === 0) return undefined;
      const phase = isRecord(obj.status) ? obj.status.phase : undefined;
      if (phase === 'Succeeded' || phase === 'Failed') return undefined;
      return opts.gracePeriodSeconds ?? spec.terminationGracePeriodSeconds ?? 30;
    };
  }

  private key(ns: string | undefined, name: string | undefined): string {
    return `${ns ?? ''}/${name ?? ''}`;
  }

  private onEvent(e: StoreEvent): void {
    if (e.resource !== this.podType || this.closed) return;
    const k = this.key(e.object.metadata.namespace, e.object.metadata.name);
    if (this.pending.has(k)) return;
    this.pending.add(k);
    setImmediate(() => {
      this.pending.delete(k);
      this.sync(k);
    });
  }

  private sync(k: string): void {
    if (this.closed) return;
    const [ns, name] = k.split('/') as [string, string];
    const pod = this.store.peek(this.podType, ns, name);
    const rt = this.pods.get(k);
    if (!pod || (rt && rt.uid !== pod.metadata.uid)) {
      if (rt) void this.stop(rt, 0);
      if (!pod) return;
    }
    const spec = pod.spec as PodSpec;
    if (!spec.nodeName || !this.store.peek(this.nodeType, undefined, spec.nodeName)) return;
    const runtime = this.pods.get(k);
    if (pod.metadata.deletionTimestamp) {
      if (runtime?.terminating) return;
      const graceMs = Math.min((pod.metadata.deletionGracePeriodSeconds ?? 0) * 1000, this.opts.terminationGraceCapMs);
      const finish = (): void => {
        try {
          if (this.store.peek(this.podType, ns, name)?.metadata.uid === pod.metadata.uid) {
            this.store.delete(this.podType, ns, name, { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid ?? '' } }, { manager: 'kubelet' });
          }
        } catch {
          // already gone, or held by finalizers: both are the API server's business now
        }
      };
      if (runtime) void this.stop(runtime, graceMs).then(finish);
      else finish();
      return;
    }
    const phase = isRecord(pod.status) ? pod.status.phase : undefined;
    if (!runtime && phase !== 'Succeeded' && phase !== 'Failed') this.start(pod);
  }

  private start(pod: KubeObject): void {
    const spec = pod.spec as PodSpec;
    const ns = pod.metadata.namespace ?? '';
    const name = pod.metadata.name ?? '';
    const dir = join(this.opts.workRoot, ns, name);
    mkdirSync(dir, { recursive: true });
    const ip = this.nextIp++;
    const rt: PodRuntime = {
      uid: pod.metadata.uid ?? '',
      namespace: ns,
      name,
      dir,
      podIP: `10.244.${Math.floor(ip / 250) % 250}.${(ip % 250) + 1}`,
      startTime: nowTimestamp(),
      containers: new Map(),
      terminating: false,
      stopped: false,
      initDone: (spec.initContainers ?? []).length === 0,
    };
    for (const c of spec.initContainers ?? []) {
      rt.containers.set(c.name, { spec: c, init: true, current: { state: 'waiting', reason: 'PodInitializing' }, restartCount: 0, log: new LogBuffer(this.opts.logLimitBytes) });
    }
    for (const c of spec.containers ?? []) {
      rt.containers.set(c.name, { spec: c, init: false, current: { state: 'waiting', reason: rt.initDone ? 'ContainerCreating' : 'PodInitializing' }, restartCount: 0, log: new LogBuffer(this.opts.logLimitBytes) });
    }
    this.pods.set(this.key(ns, name), rt);
    if (spec.activeDeadlineSeconds !== undefined) {
      rt.deadlineTimer = setTimeout(() => this.deadlineExceeded(rt), spec.activeDeadlineSeconds * 1000);
    }
    this.markDirty(rt);
    this.runNextInit(rt);
  }

  private runNextInit(rt: PodRuntime): void {
    if (rt.stopped) return;
    const next = [...rt.containers.values()].find((c) => c.init && c.current.state !== 'terminated');
    if (next) {
      this.runContainer(rt, next);
      return;
    }
    rt.initDone = true;
    for (const c of rt.containers.values()) if (!c.init) this.runContainer(rt, c);
  }

  private runContainer(rt: PodRuntime, c: ContainerRuntime): void {
    if (rt.stopped) return;
    const image = c.spec.image ?? '';
    if (this.opts.imagePullFailure.test(image)) {
      c.current = { state: 'waiting', reason: 'ErrImagePull', message: `failed to pull and unpack image "${image}": failed to resolve reference "${image}": ${image}: not found` };
      this.markDirty(rt);
      c.restartTimer = setTimeout(() => {
        c.current = { state: 'waiting', reason: 'ImagePullBackOff', message: `Back-off pulling image "${image}"` };
        this.markDirty(rt);
      }, this.opts.backoffMs);
      return;
    }
    const configError = this.envProblem(rt, c.spec);
    if (configError) {
      // As the real kubelet: the container is not created, and is retried until its Secret appears.
      c.current = { state: 'waiting', reason: 'CreateContainerConfigError', message: configError };
      this.markDirty(rt);
      c.restartTimer = setTimeout(() => this.runContainer(rt, c), this.opts.backoffMs);
      return;
    }
    const startedAt = nowTimestamp();
    if (c.restartCount > 0) {
      c.previousLog = c.log;
      c.log = new LogBuffer(this.opts.logLimitBytes);
    }
    c.log.running = true;
    if (this.opts.crashLoopImage.test(image)) {
      c.log.write('stderr', `crash-looping image ${image} exiting with status 1\n`);
      this.exited(rt, c, { state: 'terminated', exitCode: 1, reason: 'Error', startedAt, finishedAt: nowTimestamp() });
      return;
    }
    const argv = [...(c.spec.command ?? []), ...(c.spec.args ?? [])];
    if (argv.length === 0) {
      // No command: the image's entrypoint is unknown here, so the container just runs until the pod stops.
      c.current = { state: 'running', startedAt };
      this.markDirty(rt);
      if (c.init) this.exited(rt, c, { state: 'terminated', exitCode: 0, reason: 'Completed', startedAt, finishedAt: nowTimestamp() });
      return;
    }
    const [file, ...args] = argv as [string, ...string[]];
    const cwd = c.spec.workingDir && existsSync(c.spec.workingDir) ? c.spec.workingDir : rt.dir;
    const proc = spawn(file, args, { cwd, env: this.envFor(rt, c.spec), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    c.proc = proc;
    const pid = proc.pid;
    if (pid !== undefined) trackGroup(pid);
    c.current = { state: 'running', startedAt };
    proc.stdout?.on('data', (d: Buffer) => c.log.write('stdout', d));
    proc.stderr?.on('data', (d: Buffer) => c.log.write('stderr', d));
    let spawnError: Error | undefined;
    proc.on('error', (err) => {
      spawnError = err;
    });
    proc.on('close', (code, signal) => {
      c.proc = undefined;
      if (pid !== undefined) {
        // Like a container's PID 1 exiting: whatever it left behind in its group goes too.
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // the group is already empty
        }
        liveGroups.delete(pid);
      }
      if (spawnError) {
        c.log.end();
        this.exited(rt, c, {
          state: 'terminated',
          exitCode: 128,
          reason: 'StartError',
          message: `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "${file}": executable file not found in $PATH: unknown`,
          startedAt,
          finishedAt: nowTimestamp(),
        });
        return;
      }
      const exitCode = code ?? 128 + (SIGNALS[signal ?? ''] ?? 0);
      this.exited(rt, c, { state: 'terminated', exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', startedAt, finishedAt: nowTimestamp(), ...(signal ? { signal: SIGNALS[signal] ?? 0 } : {}) });
    });
    this.markDirty(rt);
  }

  envFor(rt: PodRuntime, spec: Container): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: rt.dir, HOSTNAME: rt.name, KUBERNETES_SERVICE_HOST: '', POD_DIR: rt.dir };
    for (const e of spec.env ?? []) {
      const ref = e.valueFrom?.secretKeyRef;
      if (!ref) env[e.name] = e.value ?? '';
      else {
        const value = this.secretValue(rt.namespace, ref.name, ref.key);
        if (typeof value === 'string') env[e.name] = value;
      }
    }
    return env;
  }

  /** A Secret key's value, or why it cannot be read (worded as the kubelet's CreateContainerConfigError). */
  private secretValue(namespace: string, name: string, key: string): string | { problem: string } {
    const secret = this.store.peek(this.secretType, namespace, name);
    if (!secret) return { problem: `secret "${name}" not found` };
    const data = isRecord(secret.data) ? secret.data : {};
    const raw = data[key];
    if (typeof raw !== 'string') return { problem: `couldn't find key ${key} in Secret ${namespace}/${name}` };
    return Buffer.from(raw, 'base64').toString('utf8');
  }

  /** Why the container's environment cannot be built (a missing, non-optional Secret or key), if it cannot. */
  private envProblem(rt: PodRuntime, spec: Container): string | undefined {
    for (const e of spec.env ?? []) {
      const ref = e.valueFrom?.secretKeyRef;
      if (!ref || ref.optional === true) continue;
      const value = this.secretValue(rt.namespace, ref.name, ref.key);
      if (typeof value !== 'string') return value.problem;
    }
    return undefined;
  }

  private exited(rt: PodRuntime, c: ContainerRuntime, state: Extract<ContainerState, { state: 'terminated' }>): void {
    c.log.end();
    c.current = state;
    this.markDirty(rt);
    if (rt.stopped) return;
    const pod = this.store.peek(this.podType, rt.namespace, rt.name);
    const policy = (pod?.spec as PodSpec | undefined)?.restartPolicy ?? 'Always';
    if (c.init) {
      if (state.exitCode === 0) this.runNextInit(rt);
      else if (policy === 'Never') this.stopAll(rt);
      else this.restartLater(rt, c, state);
      return;
    }
    const restart = policy === 'Always' || (policy === 'OnFailure' && state.exitCode !== 0);
    if (restart) this.restartLater(rt, c, state);
    else if ([...rt.containers.values()].every((x) => x.init || x.current.state === 'terminated')) this.stopAll(rt);
  }

  private restartLater(rt: PodRuntime, c: ContainerRuntime, last: ContainerState): void {
    c.restartCount += 1;
    c.last = last;
    const delay = Math.min(this.opts.backoffMs * 2 ** (c.restartCount - 1), this.opts.backoffMs * 30);
    c.current = {
      state: 'waiting',
      reason: 'CrashLoopBackOff',
      message: `back-off ${Math.round(delay / 1000)}s restarting failed container=${c.spec.name} pod=${rt.name}_${rt.namespace}(${rt.uid})`,
    };
    this.markDirty(rt);
    c.restartTimer = setTimeout(() => this.runContainer(rt, c), delay);
  }

  private stopAll(rt: PodRuntime): void {
    rt.stopped = true;
    if (rt.deadlineTimer) clearTimeout(rt.deadlineTimer);
    this.markDirty(rt);
  }

  /** Kills the containers first, so the Failed status already shows them terminated. */
  private deadlineExceeded(rt: PodRuntime): void {
    void this.stop(rt, 0, false).then(() => {
      rt.phaseOverride = { phase: 'Failed', reason: 'DeadlineExceeded', message: 'Pod was active on the node longer than the specified deadline' };
      this.markDirty(rt);
    });
  }

  /** Kills every container (SIGTERM, then SIGKILL after `graceMs`); resolves when all are gone. */
  private async stop(rt: PodRuntime, graceMs: number, forget = true): Promise<void> {
    rt.stopped = true;
    rt.terminating = true;
    if (rt.deadlineTimer) clearTimeout(rt.deadlineTimer);
    const waits: Promise<void>[] = [];
    for (const c of rt.containers.values()) {
      if (c.restartTimer) clearTimeout(c.restartTimer);
      const proc = c.proc;
      if (proc?.pid !== undefined && proc.exitCode === null) {
        waits.push(new Promise<void>((resolve) => proc.once('close', () => resolve())));
        killGroup(proc, graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
        if (graceMs > 0) setTimeout(() => killGroup(proc, 'SIGKILL'), graceMs).unref();
      } else if (c.current.state === 'running') {
        c.log.end();
        c.current = { state: 'terminated', exitCode: 137, reason: 'Error', startedAt: c.current.startedAt, finishedAt: nowTimestamp() };
      }
    }
    await Promise.all(waits);
    this.markDirty(rt);
    if (forget) {
      this.pods.delete(this.key(rt.namespace, rt.name));
      rmSync(rt.dir, { recursive: true, force: true });
    }
  }

  private markDirty(rt: PodRuntime): void {
    const k = this.key(rt.namespace, rt.name);
    if (this.statusDirty.has(k)) return;
    this.statusDirty.add(k);
    setImmediate(() => {
      this.statusDirty.delete(k);
      this.writeStatus(rt);
    });
  }

  private writeStatus(rt: PodRuntime): void {
    if (this.closed) return;
    const pod = this.store.peek(this.podType, rt.namespace, rt.name);
    if (!pod || pod.metadata.uid !== rt.uid) return;
    const status = this.statusOf(rt, pod);
    try {
      this.store.update(this.podType, rt.namespace, rt.name, (cur) => ({ ...cur, status }), { manager: 'kubelet', subresource: 'status' });
    } catch {
      // the pod went away between the read and the write
    }
  }

  private statusOf(rt: PodRuntime, pod: KubeObject): Record<string, unknown> {
    const prev = isRecord(pod.status) ? pod.status : {};
    const all = [...rt.containers.values()];
    const main = all.filter((c) => !c.init);
    const init = all.filter((c) => c.init);
    const toStatus = (c: ContainerRuntime): Record<string, unknown> => ({
      name: c.spec.name,
      image: c.spec.image ?? '',
      imageID: c.current.state === 'waiting' && /Pull/.test(c.current.reason) ? '' : `docker.io/library/${c.spec.image ?? ''}@sha256:${'0'.repeat(64)}`,
      containerID: c.current.state === 'waiting' ? undefined : `containerd://${rt.uid.replace(/-/g, '')}${c.spec.name}`,
      ready: c.current.state === 'running',
      started: c.current.state === 'running',
      restartCount: c.restartCount,
      state: stateJson(c.current),
      lastState: c.last ? stateJson(c.last) : {},
    });
    let phase: string;
    let reason: string | undefined;
    let message: string | undefined;
    if (rt.phaseOverride) {
      ({ phase, reason, message } = rt.phaseOverride);
    } else if (!rt.initDone && init.some((c) => c.current.state === 'terminated' && c.current.exitCode !== 0) && rt.stopped) {
      phase = 'Failed';
    } else if (main.length > 0 && main.every((c) => c.current.state === 'terminated') && rt.stopped) {
      phase = main.every((c) => c.current.state === 'terminated' && c.current.exitCode === 0) ? 'Succeeded' : 'Failed';
    } else if (main.some((c) => c.current.state === 'running' || c.current.state === 'terminated' || c.restartCount > 0)) {
      phase = 'Running';
    } else phase = 'Pending';
    const ready = phase === 'Running' && main.every((c) => c.current.state === 'running');
    const now = nowTimestamp();
    const prevConds = Array.isArray(prev.conditions) ? (prev.conditions as Condition[]) : [];
    const cond = (type: string, ok: boolean, why?: string): Condition => {
      const old = prevConds.find((c) => c.type === type);
      const status = ok ? 'True' : 'False';
      return {
        type,
        status,
        lastProbeTime: null,
        lastTransitionTime: old && old.status === status ? (old.lastTransitionTime ?? now) : now,
        ...(ok || !why ? {} : { reason: why }),
      };
    };
    const notReadyReason = phase === 'Succeeded' ? 'PodCompleted' : 'ContainersNotReady';
    const conditions = [
      cond('PodReadyToStartContainers', true),
      cond('Initialized', rt.initDone, 'ContainersNotInitialized'),
      cond('Ready', ready, notReadyReason),
      cond('ContainersReady', ready, notReadyReason),
      prevConds.find((c) => c.type === 'PodScheduled') ?? cond('PodScheduled', true),
    ];
    return {
      ...prev,
      phase,
      ...(reason ? { reason } : {}),
      ...(message ? { message } : {}),
      conditions,
      hostIP: '10.0.0.1',
      hostIPs: [{ ip: '10.0.0.1' }],
      podIP: rt.podIP,
      podIPs: [{ ip: rt.podIP }],
      startTime: rt.startTime,
      ...(init.length ? { initContainerStatuses: init.map(toStatus) } : {}),
      containerStatuses: main.map(toStatus),
      qosClass: typeof prev.qosClass === 'string' ? prev.qosClass : 'BestEffort',
    };
  }

  /** The runtime of a running container, or the API server's error for why there is none. */
  runningContainer(ns: string, podName: string, container: string | undefined): { rt: PodRuntime; c: ContainerRuntime; pod: KubeObject } {
    const pod = this.store.peek(this.podType, ns, podName);
    if (!pod) throw notFound(this.podType, podName);
    const phase = isRecord(pod.status) ? pod.status.phase : undefined;
    if (phase === 'Succeeded' || phase === 'Failed') throw badRequest(`cannot exec into a container in a completed pod; current phase is ${String(phase)}`);
    const c = this.containerOf(pod, container);
    const rt = this.pods.get(this.key(ns, podName));
    const cr = rt?.containers.get(c);
    if (!rt || !cr || cr.current.state !== 'running') throw badRequest(`unable to upgrade connection: container not found ("${c}")`);
    return { rt, c: cr, pod };
  }

  /** The container a log or exec request means; errors worded like the API server's. */
  containerOf(pod: KubeObject, container: string | undefined): string {
    const spec = pod.spec as PodSpec;
    const names = [...(spec.initContainers ?? []), ...(spec.containers ?? [])].map((c) => c.name);
    const name = pod.metadata.name ?? '';
    if (!container) {
      if ((spec.containers ?? []).length === 1) return spec.containers[0]?.name ?? '';
      throw badRequest(`a container name must be specified for pod ${name}, choose one of: [${(spec.containers ?? []).map((c) => c.name).join(' ')}]`);
    }
    if (!names.includes(container)) throw badRequest(`container ${container} is not valid for pod ${name}`);
    return container;
  }

  /** Log buffer of a container that has started at least once (or of its previous instance). */
  logOf(ns: string, podName: string, container: string | undefined, previous = false): LogBuffer {
    const pod = this.store.peek(this.podType, ns, podName);
    if (!pod) throw notFound(this.podType, podName);
    const c = this.containerOf(pod, container);
    const cr = this.pods.get(this.key(ns, podName))?.containers.get(c);
    if (previous) {
      if (!cr?.previousLog) throw badRequest(`previous terminated container "${c}" in pod "${podName}" not found`);
      return cr.previousLog;
    }
    if (!cr || (cr.current.state === 'waiting' && cr.restartCount === 0)) {
      const reason = cr?.current.state === 'waiting' ? cr.current.reason : 'ContainerCreating';
      throw badRequest(`container "${c}" in pod "${podName}" is waiting to start: ${reason}`);
    }
    return cr.log;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe();
    await Promise.all([...this.pods.values()].map((rt) => this.stop(rt, 0)));
    rmSync(this.opts.workRoot, { recursive: true, force: true });
  }
}

function stateJson(s: ContainerState): Record<string, unknown> {
  switch (s.state) {
    case 'waiting':
      return { waiting: { reason: s.reason, ...(s.message ? { message: s.message } : {}) } };
    case 'running':
      return { running: { startedAt: s.startedAt } };
    case 'terminated':
      return {
        terminated: {
          exitCode: s.exitCode,
          reason: s.reason,
          ...(s.signal ? { signal: s.signal } : {}),
          ...(s.message ? { message: s.message } : {}),
          ...(s.startedAt ? { startedAt: s.startedAt } : {}),
          finishedAt: s.finishedAt,
          containerID: '',
        },
      };
  }
}

function killGroup(proc: ChildProcess, signal: NodeJS.Signals): void {
  if (proc.pid === undefined) return;
  try {
    process.kill(-proc.pid, signal);
  } catch {
    try {
      proc.kill(signal);
    } catch {
      // already exited
    }
  }
}

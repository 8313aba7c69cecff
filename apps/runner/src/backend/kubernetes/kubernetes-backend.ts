import { PassThrough, Readable, type Duplex } from 'node:stream';
import { buildPullSecret, pullSecretNameFor } from './pull-secret';
import { buildSecretEnvSecret, secretEnvSecretNameFor } from './secret-env';
import { podLaunchViolations, refusePodLaunchViolations } from './launch-violations';
import { finished } from 'node:stream/promises';
import * as k8s from '@kubernetes/client-node';
import { PaddockError, type FieldViolation, type ResolvedSandboxSpec, type RunnerCapabilities, type SandboxStateReason } from '@paddock/contracts';
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
} from '../sandbox-backend';
import { statusCode } from './api-errors';
import { execStreaming, execUnary } from './pod-exec';
import { PodWarmTies, takeEnvSecretNameFor } from './warm-ties';
import { isTerminal, observePod, podTimes, sandboxContainerRunning, type ObservedState } from './pod-state';
import {
  buildSandboxNetworkPolicy,
  buildSandboxPod,
  refusedGpuType,
  refusedDigestPins,
  refusedRuntimeClass,
  CONTAINER_NAME,
  LAUNCH_FILES_ANNOTATION,
  LAUNCH_GATE_MARKER,
  LAUNCH_LABELS_ANNOTATION,
  labelValue,
  launchIsGated,
  podNameFor,
  RUNNER_LABEL,
  SANDBOX_ID_ANNOTATION,
  type SandboxPodOptions,
} from './sandbox-pod';
import { parseLs, parseStat } from './file-listing';
import { KUBERNETES_SPEC_FEATURES } from './spec-features';
import { clusterDnsResolver, relayPeerFor, SandboxServices, type ServiceAddressResolver } from './services';
import { kubernetesSecurityViolations } from './security-context';
import { podFeaturesRefused } from '../pod-features';

export interface KubernetesBackendOptions {
  runnerId: string;
  namespace: string;
  kubeConfig: k8s.KubeConfig;
  /** Platform-pinned RuntimeClass (gVisor/Kata in production). */
  runtimeClassName?: string;
  /** RuntimeClasses advertised and accepted from the spec label when none is pinned. */
  runtimeClasses?: string[];
  userNamespaces?: boolean;
  /** GPUs one sandbox may get (advertised as `maxGpuCount`; default 0: GPU requests are refused). */
  maxGpuCount?: number;
  /** Extended resource name of the nodes' GPUs (default `nvidia.com/gpu`). */
  gpuResource?: string;
  /** GPU models offered (advertised as `gpuTypes`), selected by the node label `gpuTypeLabel`. */
  gpuTypes?: string[];
  gpuTypeLabel?: string;
  /** Pull secrets every sandbox pod names (`PADDOCK_SANDBOX_IMAGE_PULL_SECRETS`). */
  imagePullSecrets?: string[];
  /** The namespace of the runner's own pods, admitted to the sandboxes' service ports (default `paddock-runner-<runnerId>`, the controller's). */
  runnerNamespace?: string;
  /** The cluster's DNS domain, for the Services' names (default `cluster.local`). */
  clusterDomain?: string;
  /** Where a sandbox's Service is reached (default its cluster DNS name); tests point it at a local server. */
  serviceAddress?: ServiceAddressResolver;
  /** The clock (epoch ms) that ages NetworkPolicies left without their pod; tests pass a fake one. */
  now?: () => number;
}

const FIELD_MANAGER = 'paddock-runner';
/**
 * A sandbox NetworkPolicy without its pod this old is left over: a launch creates the policy first
 * and its pod a few API calls later, possibly in another replica of the runner.
 */
const PODLESS_POLICY_GRACE_MS = 60_000;


const WATCH_BACKOFF_BASE_MS = 500;
const WATCH_BACKOFF_MAX_MS = 30_000;

/**
 * The pod watch's health: up, or down since when and why. Restarts back off exponentially with
 * jitter (0.5 s doubling to 30 s), so an unreachable API server is not hammered by every runner.
 */
export class WatchHealth {
  private failures = 0;
  private downSince: number | undefined;
  private upSince: number | undefined;
  private lastError = '';

  constructor(private readonly now: () => number = Date.now, private readonly random: () => number = Math.random) {}

  /** The watch (re)connected. The informer says so before its list, which can still fail. */
  up(): void {
    this.upSince = this.now();
    this.downSince = undefined;
  }

  /** Records a failure; returns how long to wait before the next restart. */
  down(err: unknown): number {
    // Only a watch that stayed up a while starts the backoff again from its base.
    if (this.upSince !== undefined && this.now() - this.upSince > WATCH_BACKOFF_MAX_MS) this.failures = 0;
    this.upSince = undefined;
    this.downSince ??= this.now();
    this.lastError = err instanceof Error ? err.message : String(err);
    const ceiling = Math.min(WATCH_BACKOFF_MAX_MS, WATCH_BACKOFF_BASE_MS * 2 ** this.failures++);
    return Math.round(ceiling / 2 + (ceiling / 2) * this.random());
  }

  degraded(): string | undefined {
    if (this.downSince === undefined) return undefined;
    const s = Math.round((this.now() - this.downSince) / 1000);
    return `the pod watch is down for ${s}s (${this.failures} failed attempts, retrying with backoff): ${this.lastError}`;
  }
}

/** Sandboxes as pods in the runner's sandbox namespace. Watches pods with the runner label. */
export class KubernetesBackend implements SandboxBackend {
  readonly kind = 'kubernetes' as const;
  private readonly core: k8s.CoreV1Api;
  private readonly net: k8s.NetworkingV1Api;
  private readonly listeners: ((e: BackendEvent) => void)[] = [];
  private readonly last = new Map<string, ObservedState>();
  private readonly stopReasons = new Map<string, SandboxStateReason>();
  /** Spec files still to write once the pod runs; RUNNING is held back until they are in place. */
  private readonly pendingFiles = new Map<string, { files: LaunchSpec['files']; gated: boolean }>();
  private readonly seeding = new Set<string>();
  /**
   * The newest pod seen while its files were being seeded. A gated command can run and end
   * before the seeding finishes; its end is applied after RUNNING, so no sandbox ever goes from
   * CREATING straight to its end.
   */
  private readonly seenWhileSeeding = new Map<string, k8s.V1Pod>();
  /** Seeded by this process: their pods may still read `pending` until the annotation patch is seen. */
  private readonly seeded = new Set<string>();
  private informer: (k8s.Informer<k8s.V1Pod> & k8s.ObjectCache<k8s.V1Pod>) | undefined;
  private readonly watch = new WatchHealth();
  private started: Promise<void> | undefined;
  private closed = false;
  private readonly podOpts: SandboxPodOptions;
  private readonly services: SandboxServices;
  /** Takes' ties of warm pools, kept on the taken pods (a Kubernetes runner has no state dir). */
  readonly warmTies: PodWarmTies;

  constructor(private readonly opts: KubernetesBackendOptions) {
    this.core = opts.kubeConfig.makeApiClient(k8s.CoreV1Api);
    this.net = opts.kubeConfig.makeApiClient(k8s.NetworkingV1Api);
    this.podOpts = {
      namespace: opts.namespace,
      ...(opts.runtimeClassName ? { runtimeClassName: opts.runtimeClassName } : {}),
      allowedRuntimeClasses: opts.runtimeClasses ?? [],
      ...(opts.userNamespaces !== undefined ? { userNamespaces: opts.userNamespaces } : {}),
      ...(opts.gpuResource !== undefined ? { gpuResource: opts.gpuResource } : {}),
      gpuTypes: opts.gpuTypes ?? [],
      ...(opts.gpuTypeLabel !== undefined ? { gpuTypeLabel: opts.gpuTypeLabel } : {}),
      imagePullSecrets: opts.imagePullSecrets ?? [],
      serviceRelay: relayPeerFor(opts.runnerId, opts.runnerNamespace ?? `paddock-runner-${opts.runnerId}`, labelValue(opts.runnerId)),
    };
    this.warmTies = new PodWarmTies({
      core: this.core,
      namespace: opts.namespace,
      labelSelector: this.labelSelector,
      fieldManager: FIELD_MANAGER,
      annotate: (id, annotations) => this.annotate(id, annotations),
    });
    this.services = new SandboxServices(this.core, opts.namespace, FIELD_MANAGER, opts.serviceAddress ?? clusterDnsResolver(opts.clusterDomain ?? 'cluster.local'));
  }

  capabilities(): RunnerCapabilities {
    const classes = [...new Set([...(this.opts.runtimeClassName ? [this.opts.runtimeClassName] : []), ...(this.opts.runtimeClasses ?? [])])];
    return {
      isolation: 'runtime-class',
      // NetworkPolicy enforces CIDR rules; hostnames need an egress proxy (not built).
      egressRuleKinds: ['cidr'],
      ingressRuleKinds: [],
      supportsEgress: true,
      runtimeClasses: classes,
      gpuTypes: this.opts.gpuTypes ?? [],
      maxGpuCount: this.opts.maxGpuCount ?? 0,
      architectures: ['amd64'],
      instanceTypes: [],
      storageMedia: ['STORAGE_MEDIUM_DISK'],
      supportsPrivileged: false,
      images: [],
      specFeatures: [...KUBERNETES_SPEC_FEATURES],
    };
  }

  launchViolations(resolved: ResolvedSandboxSpec, launch: LaunchSpec): FieldViolation[] {
    return [...kubernetesSecurityViolations(resolved), ...podLaunchViolations(launch, this.podOpts)];
  }

  onEvent(listener: (e: BackendEvent) => void): void {
    this.listeners.push(listener);
  }

  private get labelSelector(): string {
    return `${RUNNER_LABEL}=${labelValue(this.opts.runnerId)}`;
  }

  /** Starts the pod informer once; state changes become events. */
  start(): Promise<void> {
    this.started ??= (async () => {
      const ns = this.opts.namespace;
      const informer = k8s.makeInformer(
        this.opts.kubeConfig,
        `/api/v1/namespaces/${ns}/pods`,
        () => this.core.listNamespacedPod({ namespace: ns, labelSelector: this.labelSelector }),
        this.labelSelector,
      );
      informer.on('add', (p) => this.observe(p));
      informer.on('update', (p) => this.observe(p));
      informer.on('delete', (p) => this.observeDeleted(p));
      // A (re)list succeeded: the watch is up, and the next failure starts backing off from scratch.
      informer.on('connect', () => this.watch.up());
      // The informer stops on errors (API unreachable, expired credentials): restart it with
      // backoff, and say so in the runner's health until it is back.
      const restartAfter = (err: unknown): void => {
        const delayMs = this.watch.down(err);
        const retry = (): void => {
          if (!this.closed) informer.start().catch(restartAfter);
        };
        if (!this.closed) setTimeout(retry, delayMs).unref();
      };
      informer.on('error', restartAfter);
      this.informer = informer;
      await informer.start();
      this.watch.up();
    })();
    return this.started;
  }

  degraded(): string | undefined {
    return this.watch.degraded();
  }

  private emit(sandboxId: string, s: ObservedState): void {
    const prev = this.last.get(sandboxId);
    if (prev && (isTerminal(prev.state) || (prev.state === s.state && prev.reason === s.reason))) return;
    this.last.set(sandboxId, s);
    const e: BackendEvent = { sandboxId, state: s.state, at: new Date() };
    if (s.reason) e.reason = s.reason;
    if (s.message) e.message = s.message;
    if (s.exitCode !== undefined) e.exitCode = s.exitCode;
    for (const l of this.listeners) l(e);
  }

  /** A launch with files that no part of this process is seeding: its runner died mid-launch. */
  private orphanedLaunch(pod: k8s.V1Pod, id: string): boolean {
    return pod.metadata?.annotations?.[LAUNCH_FILES_ANNOTATION] === 'pending' && !this.pendingFiles.has(id) && !this.seeding.has(id) && !this.seeded.has(id);
  }

  private observe(pod: k8s.V1Pod): void {
    const id = pod.metadata?.annotations?.[SANDBOX_ID_ANNOTATION];
    if (!id) return;
    const s = observePod(pod);
    // Never reported as running without its files: recover() reaps it.
    if (this.orphanedLaunch(pod, id) && !isTerminal(s.state)) return;
    const stopReason = this.stopReasons.get(id);
    if (stopReason && isTerminal(s.state)) return this.emit(id, { ...s, reason: stopReason });
    if (this.seeding.has(id)) return void this.seenWhileSeeding.set(id, pod);
    // Files go in once the container is up, before RUNNING: a startup probe may need them.
    if (!isTerminal(s.state) && this.pendingFiles.has(id) && sandboxContainerRunning(pod)) return void this.seedFiles(id, pod);
    this.emit(id, s);
    // A pod that cannot pull its image would wait forever: reclaim it once reported.
    if (s.reason === 'IMAGE_NOT_FOUND') void this.deleteObjects(id, 0);
  }

  /**
   * Writes the launch's files through exec, opens the launch gate of a main command waiting for
   * them, marks the pod `written`, then reports the pod's state (RUNNING unless a startup probe
   * still holds it back). pods/exec needs a running container,
   * hence the gate (see {@link LAUNCH_GATE_MARKER}).
   */
  private async seedFiles(id: string, pod: k8s.V1Pod): Promise<void> {
    const pending = this.pendingFiles.get(id);
    if (!pending) return;
    this.pendingFiles.delete(id);
    this.seeding.add(id);
    try {
      for (const f of pending.files) {
        await this.run(id, ['sh', '-c', 'mkdir -p "$(dirname "$1")"', 'sh', f.path]);
        await this.writeFile(id, f.path, f.content);
      }
      if (pending.gated) {
        const opened = await this.run(id, ['sh', '-c', `: > ${LAUNCH_GATE_MARKER}`]);
        if (opened.exitCode !== 0) throw new Error(`opening the launch gate: ${opened.stderr.toString().trim() || `exit ${String(opened.exitCode)}`}`);
      }
      this.seeded.add(id);
      await this.markFilesWritten(id);
      // Ready when the seeding began: RUNNING before whatever the pod did meanwhile (a quick exit).
      if (observePod(pod).state === 'STATE_RUNNING') this.emit(id, { state: 'STATE_RUNNING' });
    } catch (e) {
      this.emit(id, { state: 'STATE_FAILED', reason: 'FAILED_TO_START', message: `writing launch files: ${e instanceof Error ? e.message : String(e)}` });
      void this.deleteObjects(id, 0).catch(() => undefined);
    } finally {
      this.seeding.delete(id);
      const later = this.seenWhileSeeding.get(id);
      this.seenWhileSeeding.delete(id);
      // RUNNING (or not yet, behind a startup probe) as the pod last said; a failure above already ended it.
      this.observe(later ?? pod);
    }
  }

  /** Records on the pod that its files are in place, so a restarted runner adopts it. */
  private markFilesWritten(id: string): Promise<void> {
    return this.annotate(id, { [LAUNCH_FILES_ANNOTATION]: 'written' });
  }

  /**
   * Merges annotations into the pod that a restarted runner reads (its files in place, a warm
   * take's tie). Retried: a pod left `pending` after its files landed would be failed by the next
   * runner's recovery, an untied taken pod reaped. A pod already gone (a 404) needs no mark and throws.
   */
  private async annotate(id: string, annotations: Record<string, string>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.core.patchNamespacedPod(
          { name: podNameFor(id), namespace: this.opts.namespace, body: { metadata: { annotations } } },
          k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
        );
        return;
      } catch (e) {
        if (statusCode(e) === 404 || attempt >= 5) throw e;
        await new Promise((r) => setTimeout(r, 100 * attempt));
      }
    }
  }

  private observeDeleted(pod: k8s.V1Pod): void {
    const id = pod.metadata?.annotations?.[SANDBOX_ID_ANNOTATION];
    if (!id) return;
    this.seeded.delete(id);
    const final = observePod(pod);
    const stopReason = this.stopReasons.get(id);
    if (stopReason) this.emit(id, { state: isTerminal(final.state) && final.state === 'STATE_FAILED' ? 'STATE_FAILED' : 'STATE_COMPLETED', reason: stopReason, ...(final.exitCode !== undefined ? { exitCode: final.exitCode } : {}) });
    else if (isTerminal(final.state)) this.emit(id, final);
    else this.emit(id, { state: 'STATE_FAILED', reason: 'REAPED_UNKNOWN', message: 'pod deleted outside the runner' });
    this.stopReasons.delete(id);
    // Whoever deleted the pod (the runner's stop, a user, an eviction), its credentials and its
    // policy go with it; a stop has deleted the Secrets already, and a second delete is a 404.
    void this.deleteSecrets(id)
      .then(() => this.deleteNetworkPolicy(id))
      .catch(() => undefined);
  }

  private async deleteNetworkPolicy(sandboxId: string): Promise<void> {
    try {
      await this.net.deleteNamespacedNetworkPolicy({ namespace: this.opts.namespace, name: podNameFor(sandboxId) });
    } catch (e) {
      if (statusCode(e) !== 404) throw e;
    }
  }

  /**
   * Policies whose pod went while no runner watched (deleted by hand or evicted during a restart):
   * the pod's deletion was never seen, so nothing else would delete them, nor the pod's pull and
   * env Secrets (credentials). A launch creates the policy before the Secrets and the pod, so a
   * pod-less policy also marks the Secrets to delete; they go first, the policy last, so that a
   * recovery that fails halfway finds the marker again next time.
   */
  private async deletePodlessPolicies(pods: k8s.V1Pod[]): Promise<void> {
    const names = new Set(pods.map((p) => p.metadata?.name));
    const policies = await this.net.listNamespacedNetworkPolicy({ namespace: this.opts.namespace, labelSelector: this.labelSelector });
    const now = (this.opts.now ?? Date.now)();
    for (const np of policies.items) {
      const name = np.metadata?.name ?? '';
      const created = np.metadata?.creationTimestamp ? new Date(np.metadata.creationTimestamp).getTime() : now;
      if (names.has(name) || now - created < PODLESS_POLICY_GRACE_MS) continue;
      await this.deleteSecretsOfPod(name);
      try {
        await this.net.deleteNamespacedNetworkPolicy({ namespace: this.opts.namespace, name });
      } catch (e) {
        if (statusCode(e) !== 404) throw e;
      }
    }
  }

  async launch(spec: LaunchSpec): Promise<void> {
    const refused = refusedRuntimeClass(spec, this.podOpts) ?? refusedGpuType(spec, this.podOpts) ?? refusedDigestPins(spec);
    if (refused) throw new PaddockError('failed_precondition', refused, { reason: 'CWSANDBOX_POLICY_VIOLATION' });
    // What the pod cannot carry as written is refused by name, never dropped.
    const unsupported = podFeaturesRefused(spec, CONTAINER_NAME);
    if (unsupported.length > 0) {
      throw new PaddockError('failed_precondition', `the Kubernetes backend cannot run ${unsupported.join(', ')}`, { reason: 'CWSANDBOX_POLICY_VIOLATION' });
    }
    // Refused at create already (launchViolations); checked again for callers that launch directly.
    refusePodLaunchViolations(spec, this.podOpts);
    await this.start();
    const pod = buildSandboxPod(spec, this.podOpts);
    if (spec.files.length > 0 && !this.last.has(spec.sandboxId)) this.pendingFiles.set(spec.sandboxId, { files: spec.files, gated: launchIsGated(spec) });
    const policy = buildSandboxNetworkPolicy(spec, this.podOpts);
    try {
      // The policy first, so the pod never runs a moment without it.
      await this.net.createNamespacedNetworkPolicy({ namespace: this.opts.namespace, body: policy, fieldManager: FIELD_MANAGER });
    } catch (e) {
      if (statusCode(e) !== 409) throw e;
    }
    const pullSecret = buildPullSecret(spec, podNameFor(spec.sandboxId), this.opts.namespace, pod.metadata?.labels ?? {});
    if (spec.imagePullRegistries?.length && !pullSecret) throw new PaddockError('invalid_argument', 'image pull credentials were not resolved with the create');
    const envSecret = buildSecretEnvSecret(spec, podNameFor(spec.sandboxId), this.opts.namespace, pod.metadata?.labels ?? {});
    for (const secret of [pullSecret, envSecret]) {
      if (!secret) continue;
      try {
        // Before the pod, so its first pull already has the credentials and its container its env.
        await this.core.createNamespacedSecret({ namespace: this.opts.namespace, body: secret, fieldManager: FIELD_MANAGER });
      } catch (e) {
        if (statusCode(e) !== 409) throw e;
      }
    }
    let created: k8s.V1Pod;
    try {
      created = await this.core.createNamespacedPod({ namespace: this.opts.namespace, body: pod, fieldManager: FIELD_MANAGER });
    } catch (e) {
      if (statusCode(e) !== 409) throw e;
      // Idempotent: already launched; its Services may still be missing (a launch cut short).
      await this.createServices(spec, await this.core.readNamespacedPod({ namespace: this.opts.namespace, name: podNameFor(spec.sandboxId) }));
      return;
    }
    this.emit(spec.sandboxId, { state: 'STATE_CREATING' });
    await this.createServices(spec, created);
  }

  /** After the pod, which owns them (its uid). A sandbox whose Services cannot be made is not left running without them. */
  private async createServices(spec: LaunchSpec, pod: k8s.V1Pod): Promise<void> {
    try {
      await this.services.create(spec, pod);
    } catch (e) {
      this.stopReasons.set(spec.sandboxId, 'FAILED_TO_START');
      await this.deleteObjects(spec.sandboxId, 0).catch(() => undefined);
      throw e;
    }
  }

  /** The ports a sandbox serves publicly (its launch's, or its pod's after a restart). */
  private servedPorts(sandboxId: string): number[] {
    return this.services.servedPorts(sandboxId, this.informer?.get(podNameFor(sandboxId), this.opts.namespace), CONTAINER_NAME);
  }

  /** A connection to a public service port of a RUNNING sandbox, through the port's Service. */
  connectPort(sandboxId: string, port: number): Promise<Duplex> {
    return this.services.connect({ sandboxId, podName: podNameFor(sandboxId), port, state: this.last.get(sandboxId)?.state, served: this.servedPorts(sandboxId) });
  }

  async stop(sandboxId: string, graceSeconds: number, reason: SandboxStateReason): Promise<void> {
    this.stopReasons.set(sandboxId, reason);
    const served = this.servedPorts(sandboxId);
    await this.deletePod(sandboxId, graceSeconds);
    await this.deleteSecrets(sandboxId);
    await this.services.delete(sandboxId, podNameFor(sandboxId), served);
  }

  private async deletePod(sandboxId: string, graceSeconds: number): Promise<void> {
    try {
      await this.core.deleteNamespacedPod({ namespace: this.opts.namespace, name: podNameFor(sandboxId), gracePeriodSeconds: graceSeconds });
    } catch (e) {
      if (statusCode(e) !== 404) throw e;
    }
  }

  /** The sandbox's pull, secret-env and warm take-env Secrets, if it has them: gone with its pod, so no credential outlives the sandbox. */
  private async deleteSecrets(sandboxId: string): Promise<void> {
    await this.deleteSecretsOfPod(podNameFor(sandboxId));
  }

  private async deleteSecretsOfPod(pod: string): Promise<void> {
    for (const name of [pullSecretNameFor(pod), secretEnvSecretNameFor(pod), takeEnvSecretNameFor(pod)]) {
      try {
        await this.core.deleteNamespacedSecret({ namespace: this.opts.namespace, name });
      } catch (e) {
        if (statusCode(e) !== 404) throw e;
      }
    }
  }

  private async deleteObjects(sandboxId: string, graceSeconds: number): Promise<void> {
    const served = this.servedPorts(sandboxId);
    await this.deletePod(sandboxId, graceSeconds).catch(() => undefined);
    await this.deleteSecrets(sandboxId);
    await this.services.delete(sandboxId, podNameFor(sandboxId), served);
    await this.deleteNetworkPolicy(sandboxId);
  }

  private ref(sandboxId: string): { namespace: string; pod: string } {
    return { namespace: this.opts.namespace, pod: podNameFor(sandboxId) };
  }

  exec(sandboxId: string, req: ExecRequest): Promise<ExecResult> {
    return execUnary(this.opts.kubeConfig, this.ref(sandboxId), req);
  }

  execStream(sandboxId: string, req: ExecStreamRequest): Promise<ExecProcess> {
    return execStreaming(this.opts.kubeConfig, this.ref(sandboxId), req);
  }

  private async run(sandboxId: string, argv: string[], stdin?: Buffer): Promise<ExecResult> {
    const r = await this.exec(sandboxId, { argv, maxOutputBytes: 64 << 20, ...(stdin ? { stdin } : {}) });
    if (r.exitCode !== 0) throw new Error(`${argv[0] ?? 'command'} failed in sandbox ${sandboxId} (exit ${r.exitCode}): ${r.stderr.toString('utf8').trim()}`);
    return r;
  }

  async readFile(sandboxId: string, path: string): Promise<Readable> {
    const proc = await this.execStream(sandboxId, { argv: ['cat', '--', path] });
    proc.stdin.end();
    const out = new PassThrough();
    const errChunks: Buffer[] = [];
    proc.stderr.on('data', (c: Buffer) => errChunks.push(c));
    proc.stdout.pipe(out, { end: false });
    // Ends only when the bytes are all through AND cat succeeded; a failure surfaces as a stream error.
    void Promise.all([proc.exited, finished(proc.stdout)]).then(
      ([{ exitCode }]) => (exitCode === 0 ? out.end() : out.destroy(new Error(`cannot read ${path}: ${Buffer.concat(errChunks).toString('utf8').trim()}`))),
      (e: unknown) => out.destroy(e instanceof Error ? e : new Error(String(e))),
    );
    return out;
  }

  async writeFile(sandboxId: string, path: string, content: Readable | Buffer, mode?: number): Promise<void> {
    const script = mode !== undefined ? 'cat > "$1" && chmod "$2" "$1"' : 'cat > "$1"';
    const proc = await this.execStream(sandboxId, { argv: ['sh', '-c', script, 'sh', path, (mode ?? 0).toString(8)] });
    const errChunks: Buffer[] = [];
    proc.stderr.on('data', (c: Buffer) => errChunks.push(c));
    proc.stdout.resume();
    const source = Buffer.isBuffer(content) ? Readable.from([content]) : content;
    await new Promise<void>((resolve, reject) => {
      source.once('error', reject);
      proc.stdin.once('error', reject);
      source.pipe(proc.stdin).once('finish', resolve);
    });
    const { exitCode } = await proc.exited;
    if (exitCode !== 0) throw new Error(`cannot write ${path}: ${Buffer.concat(errChunks).toString('utf8').trim()}`);
  }

  async listDir(sandboxId: string, path: string): Promise<FileStat[]> {
    const r = await this.run(sandboxId, ['sh', '-c', 'cd "$1" && for f in * .[!.]* ..?*; do [ -e "$f" ] || [ -L "$f" ] || continue; stat -c "%F|%s|%a|%Y|%n" -- "$f"; done', 'sh', path]);
    return parseLs(r.stdout.toString('utf8'), path);
  }

  async stat(sandboxId: string, path: string): Promise<FileStat> {
    const r = await this.run(sandboxId, ['stat', '-c', '%F|%s|%a|%Y|%n', '--', path]);
    return parseStat(r.stdout.toString('utf8').trim(), path);
  }

  async remove(sandboxId: string, path: string, recursive: boolean): Promise<void> {
    await this.run(sandboxId, recursive ? ['rm', '-rf', '--', path] : ['rm', '-f', '--', path]);
  }

  async *logs(sandboxId: string, req: LogRequest): AsyncIterable<LogChunk> {
    const ref = this.ref(sandboxId);
    const start = req.fromOffset ?? (req.tailLines !== undefined || req.sinceTime ? await this.windowStart(ref.pod, req) : 0);
    const pass = new PassThrough();
    const log = new k8s.Log(this.opts.kubeConfig);
    const ctl = await log.log(ref.namespace, ref.pod, CONTAINER_NAME, pass, { follow: req.follow ?? false });
    const abort = (): void => {
      ctl.abort();
      pass.end();
    };
    req.signal?.addEventListener('abort', abort, { once: true });
    let offset = 0;
    try {
      for await (const raw of pass as AsyncIterable<Buffer>) {
        const chunkStart = offset;
        offset += raw.length;
        if (offset <= start) continue;
        const data = chunkStart >= start ? raw : raw.subarray(start - chunkStart);
        yield { offset: Math.max(chunkStart, start), stream: 'stdout', data, time: new Date() };
      }
    } finally {
      req.signal?.removeEventListener('abort', abort);
      ctl.abort();
    }
  }

  /** Byte offset where a tail/since window starts, from one full read (offsets stay exact). */
  private async windowStart(pod: string, req: LogRequest): Promise<number> {
    const full = await this.core.readNamespacedPodLog({ namespace: this.opts.namespace, name: pod, container: CONTAINER_NAME, timestamps: req.sinceTime !== undefined });
    const lines = full.split(/(?<=\n)/);
    let bytes = lines.map((l) => Buffer.byteLength(req.sinceTime ? l.replace(/^\S+ /, '') : l));
    let from = 0;
    if (req.sinceTime) {
      const since = req.sinceTime.getTime();
      from = lines.findIndex((l) => Date.parse(l.split(' ', 1)[0] ?? '') >= since);
      if (from < 0) from = lines.length;
    }
    if (req.tailLines !== undefined) from = Math.max(from, lines.filter((l) => l.length > 0).length - req.tailLines);
    bytes = bytes.slice(0, from);
    return bytes.reduce((a, b) => a + b, 0);
  }

  /** The log of an ended sandbox lives with its pod: removing the pod removes it. */
  async deleteLogs(sandboxId: string): Promise<void> {
    await this.deleteObjects(sandboxId, 0);
  }

  async recover(): Promise<RecoveredSandbox[]> {
    await this.start();
    const list = await this.core.listNamespacedPod({ namespace: this.opts.namespace, labelSelector: this.labelSelector });
    // Housekeeping: a failure to sweep (the API busy, say) must not keep the runner from recovering.
    await this.deletePodlessPolicies(list.items).catch(() => undefined);
    return list.items.flatMap((pod) => {
      const id = pod.metadata?.annotations?.[SANDBOX_ID_ANNOTATION];
      if (!id) return [];
      const { startedAt, deadline } = podTimes(pod);
      let labels: Record<string, string> = {};
      try {
        labels = JSON.parse(pod.metadata?.annotations?.[LAUNCH_LABELS_ANNOTATION] ?? '{}') as Record<string, string>;
      } catch {
        labels = {};
      }
      const found: RecoveredSandbox = {
        sandboxId: id,
        labels,
        state: observePod(pod).state,
        startedAt,
        deadline,
      };
      if (this.orphanedLaunch(pod, id)) {
        found.unrecoverable = { reason: 'FAILED_TO_START', message: 'the runner restarted before this sandbox\'s launch files were written; create it again' };
      }
      return [found];
    });
  }

  async reap(sandboxId: string, reason: SandboxStateReason): Promise<void> {
    this.stopReasons.set(sandboxId, reason);
    await this.deleteObjects(sandboxId, 0);
  }

  close(): Promise<void> {
    this.closed = true;
    return this.informer ? this.informer.stop() : Promise.resolve();
  }
}

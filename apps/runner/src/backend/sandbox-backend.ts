import type { Duplex, Readable, Writable } from 'node:stream';
import type { WarmTieStore } from './warm-tie';
import type { ContainerStatusView, FieldViolation, PortProtocol, ResolvedSandboxSpec, RunnerCapabilities, SandboxState, SandboxStateReason } from '@paddock/contracts';

/**
 * The seam between the runner service (policy, RPC, heartbeats, bookkeeping) and a backend that
 * actually runs sandboxes (local bubblewrap + cgroups, or Kubernetes pods). The runner resolves
 * the user's spec against its policy first; a backend only ever sees a fully resolved,
 * already-admitted launch spec, in base units.
 */
export interface LaunchSpec {
  sandboxId: string;
  organizationId: string;
  runnerId: string;
  /** Image name; the backend maps it to something runnable or fails with IMAGE_NOT_FOUND. */
  image: string;
  /**
   * The digests the policy admits a by-tag `image` at (its allowed images pin the repository): a
   * backend that resolves tags refuses any other with IMAGE_POLICY_REJECTED before running it.
   */
  imageDigests?: string[];
  /** argv of the main process. Empty: the image's default (the local default image idles). */
  command: string[];
  env: Record<string, string>;
  /**
   * The env vars of `env` whose values are secrets from the organization's secret stores: a
   * backend fails the launch when one is missing, and never writes them into its labels.
   */
  secretEnvNames?: string[];
  /** Registries the spec's `imagePullCredentials` name (a backend that pulls uses the config below for them). */
  imagePullRegistries?: string[];
  /** Docker config JSON for those registries, resolved with the create; never persisted by the runner. */
  imagePullDockerConfig?: string;
  workingDir?: string;
  /** CPU limit in millicores. */
  cpuMillis: number;
  /** Memory limit in bytes, swap excluded. */
  memoryBytes: number;
  /**
   * What the sandbox reserves for scheduling (its requests, at most the limits above; omitted =
   * the limits). The runner counts these against its own capacity; a backend that schedules
   * (Kubernetes) asks its scheduler for the same, never more.
   */
  cpuRequestMillis?: number;
  memoryRequestBytes?: number;
  /** Cap on processes/threads inside the sandbox. */
  pidsMax: number;
  /** Cap on the writable workspace and /tmp, in bytes. */
  diskBytes: number;
  /** RLIMIT_NOFILE inside the sandbox. */
  openFilesMax: number;
  /** Hard lifetime; the backend itself kills the whole tree when it passes. */
  lifetimeSeconds: number;
  /**
   * `none`: deny-all egress (plus `egressCidrs`, when granted). `host`: unrestricted egress, as the
   * policy resolved it — never the host's own network: a backend gives the sandbox its own network
   * (a pod network; on the local backend, its own namespace behind the runner's NAT and filter).
   */
  network: 'none' | 'host';
  /**
   * Allow-only egress to these CIDR blocks over default deny (with `network: 'none'`). Only a
   * backend that advertises the `cidr` egress rule kind receives any: the policy engine refuses
   * such rules for every other runner, so no backend can drop them silently.
   */
  egressCidrs?: EgressCidrRule[];
  /**
   * The RuntimeClass the policy resolved (a sandbox's pin or the policy default), for a backend
   * that isolates with runtime classes; the policy engine refuses it for any other runner.
   */
  runtimeClassName?: string;
  /** GPUs for the main container (a backend with none advertises `maxGpuCount: 0`, so never gets any). */
  gpuCount?: number;
  /** The GPU model asked for (with `gpuCount`), e.g. `H100`; absent = any. */
  gpuType?: string;
  /** Files written into the sandbox before the main process starts. */
  files: { path: string; content: Buffer }[];
  /**
   * A file-system snapshot (a tar archive on this machine) to restore onto the sandbox's disk
   * before it starts. Only a backend that can snapshot (`snapshotDisk`) receives one.
   */
  restoreArchive?: string;
  /**
   * The snapshot the sandbox's own disk (the volume named `workspace`) is restored from, as the
   * spec asked; the runner fetches it as `restoreArchive`. A scratch volume of another name never
   * restores (refused at create).
   */
  diskRestoreSnapshotId?: string;
  /** Free-form labels persisted with the sandbox so a restarted runner can adopt it. */
  labels: Record<string, string>;
  /** The primary container's name (exec, files and logs target it by default). Absent: `main`. */
  primaryName?: string;
  /** The primary container's mounts of `volumes`. */
  volumeMounts?: LaunchVolumeMount[];
  /** Containers that run beside the primary, sharing its network and volumes; the primary's exit ends them. */
  sidecars?: LaunchContainer[];
  /** Containers run to completion, in order, before the primary and sidecars start. */
  initContainers?: LaunchContainer[];
  /** Scratch volumes of the sandbox, mounted by name. */
  volumes?: LaunchVolume[];
  /** The sandbox becomes RUNNING only once this command succeeds inside the primary container. */
  startupProbe?: LaunchProbe;
  /**
   * The ports the sandbox's public services serve. A backend relays connections (`connectPort`)
   * to these ports and refuses every other, so what it serves is what the spec declared.
   */
  servicePorts?: number[];
  /**
   * The pod annotations the policy resolved: the sandbox's own `annotations` with the runner
   * policy's pinned ones over them (those win on a key collision). Only a backend declaring the
   * `annotations` / `base.annotations` features receives any.
   */
  annotations?: Record<string, string>;
  /** What the runner policy's `base` attaches, as resolved (`ResolvedSandboxSpec.baseAttachments`); absent when it attaches nothing. */
  base?: LaunchBase;
  /** The GPU memory a GPU must have, in GB (with `gpuCount`): a backend that places GPUs selects nodes by it. */
  gpuMemoryGb?: number;
  /** The primary container's security context beyond the platform's defaults (absent = none asked). */
  securityContext?: LaunchSecurityContext;
}

/** The runner policy's `base` attachments a backend applies to the sandbox's pod. */
export interface LaunchBase {
  /** The pinned annotations (already in `LaunchSpec.annotations`), kept so a refusal names `base.annotations`. */
  annotations: Record<string, string>;
  labels: Record<string, string>;
  /** Platform sidecars, as the policy resolves them: a name and the amounts counted in its ceilings. */
  containers: { name: string; cpuMillis: number; memoryBytes: number }[];
  /** The rest of the base's pod-spec fragment, verbatim. */
  podSpec: Record<string, unknown>;
}

/**
 * What a container's `securityContext` asks beyond what every sandbox has (no capability, no
 * privilege escalation, a read-only root, the platform's seccomp profile). Only what was asked is
 * set; a backend that cannot honour a value has refused it at create (`launchViolations`).
 */
export interface LaunchSecurityContext {
  /** The uid/gid the container's processes run as (inside the sandbox's user namespace on the local backend). */
  runAsUser?: number;
  runAsGroup?: number;
  /** Capabilities to keep, upper case without the `CAP_` prefix (`NET_BIND_SERVICE`), deduplicated. */
  capabilitiesAdd?: string[];
  /** A seccomp profile other than the platform's `RuntimeDefault` (`Localhost/<path>`). */
  seccompProfile?: string;
}

/** A container other than the primary: its own image, command, environment and files. */
export interface LaunchContainer {
  name: string;
  image: string;
  command: string[];
  env: Record<string, string>;
  workingDir?: string;
  files: { path: string; content: Buffer }[];
  volumeMounts: LaunchVolumeMount[];
  securityContext?: LaunchSecurityContext;
}

export interface LaunchVolumeMount {
  volume: string;
  mountPath: string;
  readOnly: boolean;
  /** A directory inside the volume, relative (no `..`); absent = the volume's root. */
  subPath?: string;
}

/** A scratch volume: `memory` counts against the sandbox's memory; both are capped at `sizeBytes`. */
export interface LaunchVolume {
  name: string;
  medium: 'disk' | 'memory';
  sizeBytes: number;
  /** A registered volume to mount instead of a scratch one. */
  volumeId?: string;
  /** A snapshot the scratch volume starts from. */
  restoreFromSnapshotId?: string;
}

/** An exec startup probe, in the units of a Kubernetes probe. */
export interface LaunchProbe {
  exec: string[];
  periodSeconds: number;
  timeoutSeconds: number;
  failureThreshold: number;
  initialDelaySeconds: number;
}

/** One container's state as `status.containerStatuses` reports it. */
export type ContainerStatus = ContainerStatusView;

/** One resolved egress grant: a CIDR block (minus `except`), on `ports` or every port when empty. */
export interface EgressCidrRule {
  cidr: string;
  except: string[];
  ports: { protocol: PortProtocol; port: number; endPort?: number }[];
}

/** A state change observed by the backend (published by the runner as a sandbox state event). */
export interface BackendEvent {
  sandboxId: string;
  state: SandboxState;
  reason?: SandboxStateReason;
  message?: string;
  exitCode?: number;
  at: Date;
}

export interface ExecRequest {
  argv: string[];
  /** The container to run in; absent = the primary. */
  container?: string;
  env?: Record<string, string>;
  cwd?: string;
  /** Kill the command after this long; the result then says `timedOut`. */
  timeoutMs?: number;
  /** Captured bytes per stream; past this the output is dropped but still counted. */
  maxOutputBytes?: number;
  stdin?: Buffer;
}

export interface ExecResult {
  exitCode: number;
  stdout: Buffer;
  stderr: Buffer;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  /** True byte counts produced by the command, including what was dropped. */
  stdoutBytes: number;
  stderrBytes: number;
  timedOut: boolean;
}

export interface ExecStreamRequest {
  argv: string[];
  /** The container to run in; absent = the primary. */
  container?: string;
  env?: Record<string, string>;
  cwd?: string;
  tty?: boolean;
  cols?: number;
  rows?: number;
}

/** A running command. Node streams carry backpressure end to end: nothing buffers unbounded. */
export interface ExecProcess {
  stdin: Writable;
  stdout: Readable;
  /** With a TTY, stderr is merged into stdout and this stream ends empty. */
  stderr: Readable;
  resize(cols: number, rows: number): void;
  kill(signal?: NodeJS.Signals): void;
  exited: Promise<{ exitCode: number | null; signal: NodeJS.Signals | null }>;
}

export interface FileStat {
  path: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
  size: number;
  mode: number;
  modifiedAt: Date;
}

export interface LogChunk {
  /** Byte offset of `data` in the sandbox's combined log; resume with `fromOffset = offset + data.length`. */
  offset: number;
  stream: 'stdout' | 'stderr';
  data: Buffer;
  time: Date;
}

export interface LogRequest {
  /** Whose output; absent = the primary container's. */
  container?: string;
  follow?: boolean;
  tailLines?: number;
  sinceTime?: Date;
  fromOffset?: number;
  signal?: AbortSignal;
}

/** Where a disk capture goes: a file on this machine, or a consumer of the archive stream. */
export type DiskArchiveSink = { file: string } | { write: (archive: Readable) => Promise<void> };

/** A sample of what a sandbox uses, as its cgroups count it. */
export interface CgroupUsage {
  /** CPU time consumed since the sandbox started, in nanoseconds. */
  cpuNanos: number;
  memoryBytes: number;
}

/** What a backend found already running when the runner (re)started. */
export interface RecoveredSandbox {
  sandboxId: string;
  labels: Record<string, string>;
  state: SandboxState;
  startedAt: Date;
  /** Absolute deadline computed from the launch's lifetime. */
  deadline: Date;
  /**
   * Set when the backend knows this sandbox cannot be served by the new runner process (its
   * launch was cut short by the previous one): it is reaped with this reason and message.
   */
  unrecoverable?: { reason: SandboxStateReason; message: string };
}

export interface SandboxBackend {
  readonly kind: 'local' | 'kubernetes';
  capabilities(): RunnerCapabilities;
  /**
   * What of an admitted spec this backend cannot run as asked (a security context it cannot give,
   * pod metadata no pod may carry...), each naming the field. The service checks it at create,
   * before anything is recorded, so a refusal is the create's answer rather than a sandbox that
   * fails at launch. Absent: nothing refused.
   */
  launchViolations?(resolved: ResolvedSandboxSpec, launch: LaunchSpec): FieldViolation[];
  /** Subscribes to state changes of every sandbox this backend runs. */
  onEvent(listener: (e: BackendEvent) => void): void;
  /**
   * Starts creating the sandbox and returns without waiting for it to run: progress arrives as
   * events (CREATING → RUNNING, or FAILED with a reason). Calling it twice with the same
   * sandboxId is a no-op (idempotent).
   */
  launch(spec: LaunchSpec): Promise<void>;
  /** Stops the sandbox: SIGTERM, then SIGKILL of the whole tree after `graceSeconds` (0 = at once). */
  stop(sandboxId: string, graceSeconds: number, reason: SandboxStateReason): Promise<void>;
  exec(sandboxId: string, req: ExecRequest): Promise<ExecResult>;
  execStream(sandboxId: string, req: ExecStreamRequest): Promise<ExecProcess>;
  readFile(sandboxId: string, path: string): Promise<Readable>;
  writeFile(sandboxId: string, path: string, content: Readable | Buffer, mode?: number): Promise<void>;
  listDir(sandboxId: string, path: string): Promise<FileStat[]>;
  stat(sandboxId: string, path: string): Promise<FileStat>;
  remove(sandboxId: string, path: string, recursive: boolean): Promise<void>;
  logs(sandboxId: string, req: LogRequest): AsyncIterable<LogChunk>;
  /**
   * DeleteSandboxLogs: destroys the retained output of an ENDED sandbox (the runner refuses a live
   * one before calling this). Idempotent. Later `logs` calls fail with CWSANDBOX_LOGS_DELETED.
   */
  deleteLogs(sandboxId: string): Promise<void>;
  /**
   * One TCP connection to `port` on the sandbox's own loopback, made from inside its network
   * namespace (so it works whether or not the sandbox has egress). Absent: the backend cannot
   * relay, and public services are refused at create. A port outside the launch's `servicePorts`
   * is refused (CWSANDBOX_INVALID_REQUEST) without reaching the sandbox.
   */
  connectPort?(sandboxId: string, port: number): Promise<Duplex>;
  /** The state of each container of a sandbox with several (init containers first); undefined when it has one. */
  containerStatuses?(sandboxId: string): ContainerStatus[] | undefined;
  /**
   * Lists what this backend already runs (after a runner restart). The runner then adopts or
   * reaps each one; `reap` kills it and releases every resource (processes, cgroups, files).
   */
  recover(): Promise<RecoveredSandbox[]>;
  reap(sandboxId: string, reason: SandboxStateReason): Promise<void>;
  /** The runner forgot this ended sandbox's record (no call names it again): drop what is kept for it. */
  forget?(sandboxId: string): void;
  /** Where warm pools keep takes' ties when the backend has a place for them (else the runner's state dir, or nowhere). */
  readonly warmTies?: WarmTieStore;
  /**
   * Freezes a RUNNING sandbox (its processes keep their memory) and resolves once the backend has
   * reported STATE_PAUSED; paused time does not count against its lifetime. Absent: the backend
   * cannot pause, and the runner refuses `pause` naming that capability.
   */
  pause?(sandboxId: string, reason: SandboxStateReason): Promise<void>;
  /** Thaws a PAUSED sandbox; resolves once the backend has reported STATE_RUNNING again. */
  resume?(sandboxId: string): Promise<void>;
  /**
   * Captures a live sandbox's writable disk as a tar archive, with the sandbox frozen meanwhile
   * (consistency): straight into a local file, or as a stream handed to `write` (a remote
   * store). Absent: the backend cannot snapshot (refused by name).
   */
  snapshotDisk?(sandboxId: string, out: DiskArchiveSink): Promise<{ frozenMs: number }>;
  /** Cumulative CPU time and current memory of a live sandbox, or undefined when unknown. */
  usage?(sandboxId: string): CgroupUsage | undefined;
  /**
   * Why the backend cannot fully serve right now (e.g. its watch of the cluster is down and being
   * retried), or undefined when it can. The runner reports it as DEGRADED health in its heartbeat.
   */
  degraded?(): string | undefined;
  /** Releases backend resources (not the sandboxes: they outlive a runner restart). */
  close(): Promise<void>;
}

import type { Readable, Writable } from 'node:stream';
import type { PortProtocol, RunnerCapabilities, SandboxState, SandboxStateReason } from '@paddock/contracts';

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
  /** Free-form labels persisted with the sandbox so a restarted runner can adopt it. */
  labels: Record<string, string>;
}

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
  follow?: boolean;
  tailLines?: number;
  sinceTime?: Date;
  fromOffset?: number;
  signal?: AbortSignal;
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
   * Lists what this backend already runs (after a runner restart). The runner then adopts or
   * reaps each one; `reap` kills it and releases every resource (processes, cgroups, files).
   */
  recover(): Promise<RecoveredSandbox[]>;
  reap(sandboxId: string, reason: SandboxStateReason): Promise<void>;
  /**
   * Why the backend cannot fully serve right now (e.g. its watch of the cluster is down and being
   * retried), or undefined when it can. The runner reports it as DEGRADED health in its heartbeat.
   */
  degraded?(): string | undefined;
  /** Releases backend resources (not the sandboxes: they outlive a runner restart). */
  close(): Promise<void>;
}

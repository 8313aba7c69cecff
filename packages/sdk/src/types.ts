/**
 * Wire types of the gateway's REST surface (duplicated on purpose: the SDK depends on nothing
 * but `ws` and Node built-ins). Specs are open-ended: the gateway validates them.
 */

export type SandboxState =
  | 'STATE_UNSPECIFIED'
  | 'STATE_PENDING'
  | 'STATE_CREATING'
  | 'STATE_RUNNING'
  | 'STATE_TERMINATING'
  | 'STATE_COMPLETED'
  | 'STATE_FAILED'
  /** Frozen (`pause()`, or the policy's idle timeout); counts as ready: any call resumes it. */
  | 'STATE_PAUSED';

/** The states a sandbox ends in (a test checks them against the platform's contract). */
export const TERMINAL_STATES: ReadonlySet<string> = new Set<SandboxState>(['STATE_COMPLETED', 'STATE_FAILED']);

export interface ContainerSpec {
  name?: string;
  image?: string;
  command?: string | string[];
  args?: string[];
  environmentVariables?: Record<string, string>;
  resources?: { cpu?: string | number; memory?: string | number; gpu?: { count?: number; type?: string } };
  workingDir?: string;
  /**
   * Secrets from the organization's secret stores (`cwic secret-store`), resolved server-side
   * into env vars of this container: `envVar` defaults to the secret's path, `field` picks one
   * field of a JSON-object secret. The values never pass through the client.
   */
  secretStores?: SecretStoreReference[];
  [field: string]: unknown;
}

/** A port of the sandbox and who may reach it; `VISIBILITY_PUBLIC` services get a URL on the gateway. */
export interface ServiceSpec {
  port: number;
  name?: string;
  /** `TCP` (the default). */
  protocol?: string;
  /** `VISIBILITY_PUBLIC` for a URL on the gateway; `VISIBILITY_UNSPECIFIED` (default) for inside the sandbox only. */
  visibility?: string;
  /** `{ kind: 'ENDPOINT_KIND_HTTPS', auth: 'ENDPOINT_AUTH_OPEN' | 'ENDPOINT_AUTH_TOKEN' }`. */
  endpoint?: { kind?: string; auth?: string; requestTimeoutSeconds?: number };
}

export interface ServiceStatus {
  port: number;
  name?: string;
  protocol: string;
  visibility: string;
  /** `url` is present while the sandbox is starting or running. */
  endpoint?: { kind: string; auth: string; url?: string };
}

export interface ContainerStatus {
  name: string;
  state: 'waiting' | 'running' | 'terminated';
  exitCode?: number;
  restartCount: number;
}

export interface SecretStoreReference {
  storeName: string;
  secrets: { path: string; field?: string; envVar?: string }[];
}

export interface SandboxSpec {
  containers?: ContainerSpec[];
  primaryContainer?: string;
  initContainers?: ContainerSpec[];
  /**
   * Scratch volumes: `{ name, scratch: { size: '1Gi', medium: 'STORAGE_MEDIUM_DISK' | 'STORAGE_MEDIUM_MEMORY' } }`;
   * `scratch.restoreFromSnapshotId` fills one from a file-system snapshot.
   */
  volumes?: { name: string; scratch?: { size?: string; medium?: string; restoreFromSnapshotId?: string } }[];
  services?: ServiceSpec[];
  maxLifetimeSeconds?: number;
  tags?: string[];
  runnerIds?: string[];
  network?: Record<string, unknown>;
  annotations?: Record<string, string>;
  runtimeClass?: string;
  [field: string]: unknown;
}

export interface PlacementVerdict {
  runnerId: string;
  admitted: boolean | null;
  violations: { field: string; rule: string; description: string }[];
  note?: string;
}

export interface ResourceUsage {
  cpuMillicores: number;
  memoryMb: number;
  gpuCount: number;
  sampledAt: string;
}

export interface SandboxStatus {
  state: SandboxState;
  stateReason?: string;
  message?: string;
  exitCode?: number;
  runnerId: string;
  runnerGroupId: string;
  createTime: string;
  startTime?: string;
  endTime?: string;
  services?: ServiceStatus[];
  containerStatuses?: ContainerStatus[];
  /** What the sandbox uses now (its runner's last sample); absent before the first and once ended. */
  resourceUsage?: ResourceUsage;
  placement?: {
    decidedAt: string;
    candidates: string[];
    verdicts: PlacementVerdict[];
    attempts: { runnerId: string; outcome: string; code?: string; message?: string }[];
    winner: string | null;
  };
  [effective: string]: unknown;
}

export interface SandboxResource {
  sandboxId: string;
  spec: SandboxSpec;
  status: SandboxStatus;
}

export interface ExplainResponse {
  candidates: string[];
  verdicts: PlacementVerdict[];
  order: string[];
  wouldPlaceOn: string | null;
}

export interface ExecResult {
  command: string[];
  exitCode: number;
  stdout: Buffer;
  stderr: Buffer;
  /** UTF-8 decodings of stdout/stderr. */
  stdoutText: string;
  stderrText: string;
  timedOut: boolean;
}

export interface FileEntry {
  path: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
  size: number;
  mode: number;
  modifiedAt: string;
}

export interface LogEntry {
  /** Byte offset in the sandbox's combined log; resume after it with `fromOffset: offset + data.length`. */
  offset: number;
  stream: 'stdout' | 'stderr';
  data: Buffer;
  time: string;
}

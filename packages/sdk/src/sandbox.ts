import { FileSystemSnapshots, type FileSystemSnapshot } from './snapshots';
import { randomUUID } from 'node:crypto';
import { PaddockClient, backoffDelay, type ClientOptions } from './client';
import {
  PaddockError,
  SandboxFailedError,
  SandboxNotFoundError,
  SandboxTerminatedError,
  SandboxTimeoutError,
  ValidationError,
  errorFromBody,
  isErrorBody,
} from './errors';
import { ExecProcess, type ExecOptions } from './process';
import { TERMINAL_STATES, type ExplainResponse, type FileEntry, type LogEntry, type SandboxResource, type SandboxSpec, type SandboxState } from './types';

// Node 20 may lack the well-known symbol; `await using` looks it up at run time.
(Symbol as { asyncDispose?: symbol }).asyncDispose ??= Symbol.for('Symbol.asyncDispose');

/** Unary file ops carry base64 in JSON up to this size; larger files use the raw-bytes route. */
const INLINE_FILE_LIMIT = 4 * 1024 * 1024;

export interface CreateOptions extends ClientOptions {
  /** Idempotency key; generated when omitted so a retried create never makes a second sandbox. */
  requestId?: string;
  /** Starts from this file-system snapshot (its `workspace` volume: the sandbox's own disk). */
  fileSystemSnapshotId?: string;
  tags?: string[];
  runnerIds?: string[];
  /** Reuse a client (connection settings) instead of building one from the options. */
  client?: PaddockClient;
}

export interface WaitOptions {
  timeoutMs?: number;
  /** First poll interval (grows ×1.5 up to 1 s), used only against a gateway without `:wait`. */
  pollIntervalMs?: number;
}

/** States that end `wait()`: started (or already ended, or going away). */
// PAUSED counts as started: the product's clients treat it as ready (any call resumes it).
const STARTED_STATES: ReadonlySet<string> = new Set(['STATE_RUNNING', 'STATE_PAUSED', 'STATE_COMPLETED', 'STATE_FAILED', 'STATE_TERMINATING']);

/** Ends that are someone's decision, not a failure: `waitUntilComplete` raises them only on request. */
const TERMINATION_REASONS: ReadonlySet<string> = new Set(['STOPPED_BY_USER', 'LIFETIME_EXPIRED']);

/** Longest single long poll; a longer wait is a series of them (proxies drop idle requests). */
const LONG_POLL_MAX_SECONDS = 30;

export interface StopOptions {
  gracePeriodSeconds?: number;
  /** Succeed when the sandbox is already gone. */
  missingOk?: boolean;
  /** Wait until the gateway reports a terminal state (default true). */
  wait?: boolean;
  timeoutMs?: number;
}

export interface LogsOptions {
  follow?: boolean;
  tailLines?: number;
  sinceTime?: Date | string;
  fromOffset?: number;
  /** Whose output (a sandbox with several containers); default the primary's. */
  container?: string;
  /** Reconnect attempts after a dropped follow stream (resumes at the last offset). Default 3. */
  maxResumes?: number;
  signal?: AbortSignal;
}

export interface ListOptions extends ClientOptions {
  tags?: string[];
  state?: string;
  runnerIds?: string[];
  showTerminated?: boolean;
  client?: PaddockClient;
}

/** `tags` (all must match) or `purgeAll: true`, not both; `dryRun` only counts. */
export type PurgeOptions = ClientOptions & { client?: PaddockClient; dryRun?: boolean } & ({ tags: string[]; purgeAll?: never } | { purgeAll: true; tags?: never });

export interface PurgeResult {
  purgeCount: number;
  failedSandboxIds: string[];
  retryableFailedSandboxIds: string[];
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * A sandbox on the Paddock data plane. Operations that need a running sandbox (`exec`, files)
 * wait for RUNNING first. `await using sb = await Sandbox.run(...)` stops it on scope exit.
 */
export class Sandbox {
  private resource: SandboxResource;
  private stopping: Promise<void> | null = null;

  private constructor(
    readonly client: PaddockClient,
    resource: SandboxResource,
  ) {
    this.resource = resource;
  }

  get sandboxId(): string {
    return this.resource.sandboxId;
  }
  get state(): SandboxState {
    return this.resource.status.state;
  }
  get runnerId(): string {
    return this.resource.status.runnerId;
  }
  get status(): SandboxResource['status'] {
    return this.resource.status;
  }
  get spec(): SandboxSpec {
    return this.resource.spec;
  }
  /** The gateway URL of the public service on `port` (from the last status read), or undefined. */
  serviceUrl(port: number): string | undefined {
    return this.resource.status.services?.find((s) => s.port === port)?.endpoint?.url;
  }

  get returncode(): number | undefined {
    return this.resource.status.exitCode;
  }

  /** Asks the gateway to place a sandbox; returns as soon as it is accepted (not yet RUNNING). */
  static async create(spec: SandboxSpec = {}, opts: CreateOptions = {}): Promise<Sandbox> {
    const client = opts.client ?? new PaddockClient(opts);
    const full: SandboxSpec = {
      ...spec,
      ...(opts.tags ? { tags: [...(spec.tags ?? []), ...opts.tags] } : {}),
      // Runner ids only make sense for the organization's own runners (SANDBOX_MODE_CKS).
      ...(opts.runnerIds ? { runnerIds: opts.runnerIds, mode: spec.mode ?? 'SANDBOX_MODE_CKS' } : {}),
      ...(opts.fileSystemSnapshotId ? { volumes: [...(spec.volumes ?? []), { name: 'workspace', scratch: { restoreFromSnapshotId: opts.fileSystemSnapshotId } }] } : {}),
    };
    const requestId = opts.requestId ?? randomUUID();
    const res = await client.json<SandboxResource>('POST', '/v1/sandboxes', { body: { spec: full, requestId }, idempotent: true });
    return new Sandbox(client, res);
  }

  /** Create, then wait until RUNNING. */
  static async run(spec: SandboxSpec = {}, opts: CreateOptions & WaitOptions = {}): Promise<Sandbox> {
    const sb = await Sandbox.create(spec, opts);
    await sb.wait(opts);
    return sb;
  }

  /** Per-runner placement verdicts for a spec, without creating anything. */
  static async explain(spec: SandboxSpec = {}, opts: CreateOptions = {}): Promise<ExplainResponse> {
    const client = opts.client ?? new PaddockClient(opts);
    return client.json<ExplainResponse>('POST', '/v1/sandboxes:explain', { body: { spec: { ...spec, ...(opts.runnerIds ? { runnerIds: opts.runnerIds, mode: spec.mode ?? 'SANDBOX_MODE_CKS' } : {}) } }, idempotent: true });
  }

  static async fromId(sandboxId: string, opts: ClientOptions & { client?: PaddockClient } = {}): Promise<Sandbox> {
    const client = opts.client ?? new PaddockClient(opts);
    return new Sandbox(client, await client.json<SandboxResource>('GET', `/v1/sandboxes/${encodeURIComponent(sandboxId)}`, { idempotent: true }));
  }

  /** Every sandbox matching the filters (all pages). */
  static async list(opts: ListOptions = {}): Promise<Sandbox[]> {
    const client = opts.client ?? new PaddockClient(opts);
    const out: Sandbox[] = [];
    let pageToken: string | undefined;
    do {
      const page = await client.json<{ sandboxes: SandboxResource[]; nextPageToken: string }>('GET', '/v1/sandboxes', {
        query: {
          pageSize: 100,
          pageToken,
          tags: opts.tags,
          state: opts.state,
          runnerIds: opts.runnerIds,
          showTerminated: opts.showTerminated,
        },
        idempotent: true,
      });
      out.push(...page.sandboxes.map((r) => new Sandbox(client, r)));
      pageToken = page.nextPageToken || undefined;
    } while (pageToken);
    return out;
  }

  static async delete(sandboxId: string, opts: ClientOptions & { client?: PaddockClient; missingOk?: boolean; gracePeriodSeconds?: number } = {}): Promise<void> {
    const client = opts.client ?? new PaddockClient(opts);
    await client.json('DELETE', `/v1/sandboxes/${encodeURIComponent(sandboxId)}`, {
      query: { allowMissing: opts.missingOk ?? false, gracePeriodSeconds: opts.gracePeriodSeconds ?? 0 },
      idempotent: true,
    });
  }

  /**
   * Stops every live sandbox carrying all `tags`, or, with `purgeAll: true`, every live sandbox of
   * the organization (exactly one of the two). `dryRun` only counts them. Failed ids can be purged
   * again; `retryableFailedSandboxIds` are those worth retrying as they are.
   */
  static async purge(opts: PurgeOptions): Promise<PurgeResult> {
    const client = opts.client ?? new PaddockClient(opts);
    return client.json<PurgeResult>('POST', '/v1/sandboxes:purge', {
      body: { ...(opts.tags ? { tags: opts.tags } : {}), ...(opts.purgeAll ? { purgeAll: true } : {}), dryRun: opts.dryRun ?? false },
      // Stopping an already stopped sandbox is a no-op, so a retried purge is safe.
      idempotent: true,
    });
  }

  /**
   * DeleteSandboxLogs: destroys the retained logs of this sandbox once it has ended (refused with
   * `CWSANDBOX_SANDBOX_NOT_TERMINAL` while it is live). Idempotent; `logs()` then fails with
   * `CWSANDBOX_LOGS_DELETED`.
   */
  async deleteLogs(): Promise<void> {
    await this.client.json('DELETE', `/v1/sandboxes/${encodeURIComponent(this.sandboxId)}/logs`, { idempotent: true });
  }

  /**
   * Freezes the sandbox (`STATE_PAUSED`): its processes keep their memory, its lifetime stops and
   * its CPU goes back to the runner. Any exec, file or log call, or `resume()`, resumes it.
   * Idempotent. A runner whose backend cannot pause refuses with `CWSANDBOX_NOT_IMPLEMENTED`.
   */
  async pause(): Promise<SandboxResource> {
    this.resource = await this.client.json<SandboxResource>('POST', `/v1/sandboxes/${encodeURIComponent(this.sandboxId)}:pause`, { body: {}, idempotent: true });
    return this.resource;
  }

  /** Resumes a paused sandbox where it stopped (`STATE_RUNNING`). Idempotent. */
  async resume(): Promise<SandboxResource> {
    this.resource = await this.client.json<SandboxResource>('POST', `/v1/sandboxes/${encodeURIComponent(this.sandboxId)}:resume`, { body: {}, idempotent: true });
    return this.resource;
  }

  /**
   * Snapshots the sandbox's disk (`volume` default `workspace`) and, unless `wait: false`, waits
   * until the snapshot is READY. The sandbox is frozen only while its files are read.
   * Idempotent with `requestId`.
   */
  async snapshot(opts: { requestId?: string; volume?: string; wait?: boolean; timeoutMs?: number } = {}): Promise<FileSystemSnapshot> {
    const s = await this.client.json<FileSystemSnapshot>('POST', `/v1/sandboxes/${encodeURIComponent(this.sandboxId)}:snapshot`, {
      body: { requestId: opts.requestId ?? randomUUID(), ...(opts.volume ? { scratchVolumeName: opts.volume } : {}) },
      idempotent: true,
    });
    if (opts.wait === false) return s;
    return FileSystemSnapshots.waitReady(s.fileSystemSnapshotId, { client: this.client, ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}) });
  }

  /**
   * Stops the sandbox with its volumes (default `workspace`) snapshotted first, as the Python
   * client's `stop(snapshot_on_stop=True)`: returns the snapshot ids, one per volume, in order.
   */
  async stopWithSnapshot(opts: StopOptions & { volumes?: string[]; requestId?: string } = {}): Promise<string[]> {
    const volumes = opts.volumes ?? ['workspace'];
    const res = await this.client.json<{ fileSystemSnapshotIds?: string[] }>('DELETE', `/v1/sandboxes/${encodeURIComponent(this.sandboxId)}`, {
      query: { gracePeriodSeconds: opts.gracePeriodSeconds ?? 0, snapshotVolumes: volumes, requestId: opts.requestId ?? randomUUID() },
      idempotent: true,
    });
    await this.stop({ ...opts, missingOk: true });
    return res.fileSystemSnapshotIds ?? [];
  }

  /** Re-reads the sandbox from the gateway. */
  async refresh(): Promise<SandboxResource> {
    this.resource = await this.client.json<SandboxResource>('GET', `/v1/sandboxes/${encodeURIComponent(this.sandboxId)}`, { idempotent: true });
    return this.resource;
  }

  /**
   * Waits until RUNNING with the gateway's long poll (`GET /v1/sandboxes/{id}:wait`, answered as
   * soon as the state settles), falling back to polling with backoff against a gateway that does
   * not know `:wait`. COMPLETED reached before RUNNING (a command that ended quickly) returns too;
   * FAILED throws `SandboxFailedError`; a timeout (default 120 s) throws `SandboxTimeoutError`.
   */
  async wait(opts: WaitOptions = {}): Promise<this> {
    await this.waitUntil('started', (s) => STARTED_STATES.has(s.state), opts.timeoutMs ?? 120_000, opts.pollIntervalMs);
    const s = this.resource.status;
    if (s.state === 'STATE_FAILED') {
      throw new SandboxFailedError(this.sandboxId, s.stateReason, `sandbox ${this.sandboxId} failed (${s.stateReason ?? 'no reason'}): ${s.message ?? ''}`);
    }
    if (s.state === 'STATE_TERMINATING') {
      throw new SandboxTerminatedError('failed_precondition', `sandbox ${this.sandboxId} is terminating`, { reason: 'CWSANDBOX_SANDBOX_TERMINATED' });
    }
    return this;
  }

  /**
   * Waits until the sandbox has ended, as the Python client's `wait_until_complete`. Returns once
   * its main command exited, whatever the exit code (`returncode` holds it: a non-zero exit is the
   * command's outcome, not the platform's failure). Stopped by a user or by its lifetime, it
   * throws `SandboxTerminatedError` unless `raiseOnTermination` is false; any other end (failed
   * to start, out of memory, runner lost...) throws `SandboxFailedError`; a timeout (default: none)
   * throws `SandboxTimeoutError`.
   */
  async waitUntilComplete(opts: WaitOptions & { raiseOnTermination?: boolean } = {}): Promise<this> {
    await this.waitUntil('ended', (s) => TERMINAL_STATES.has(s.state), opts.timeoutMs ?? Number.POSITIVE_INFINITY, opts.pollIntervalMs);
    const s = this.resource.status;
    const reason = s.stateReason ?? (s.state === 'STATE_COMPLETED' ? 'EXITED' : undefined);
    if (reason === 'EXITED') return this;
    if (reason !== undefined && TERMINATION_REASONS.has(reason)) {
      if (opts.raiseOnTermination ?? true) {
        throw new SandboxTerminatedError('failed_precondition', `sandbox ${this.sandboxId} was terminated before completing (${reason})`, {
          reason: 'CWSANDBOX_SANDBOX_TERMINATED',
        });
      }
      return this;
    }
    throw new SandboxFailedError(this.sandboxId, s.stateReason, `sandbox ${this.sandboxId} failed (${s.stateReason ?? 'no reason'}): ${s.message ?? ''}`);
  }

  /** Long polls (or, against an older gateway, polls) until `done` holds for the sandbox's status. */
  private async waitUntil(until: 'started' | 'ended', done: (s: SandboxResource['status']) => boolean, timeoutMs: number, pollIntervalMs = 5): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let interval = pollIntervalMs;
    for (;;) {
      const s = this.resource.status;
      if (done(s)) return;
      const remainingMs = deadline - Date.now();
      if (remainingMs <= 0) throw new SandboxTimeoutError('deadline_exceeded', `sandbox ${this.sandboxId} not ${until} in time (state ${s.state})`);
      if (this.client.longPoll && (await this.longPoll(until, Math.min(LONG_POLL_MAX_SECONDS, remainingMs / 1000)))) continue;
      await sleep(Math.min(interval, remainingMs));
      interval = Math.min(1_000, interval * 1.5);
      await this.refresh();
    }
  }

  /** One long poll; false (and no more long polls on this client) when the gateway lacks `:wait`. */
  private async longPoll(until: 'started' | 'ended', seconds: number): Promise<boolean> {
    try {
      this.resource = await this.client.json<SandboxResource>('GET', `/v1/sandboxes/${encodeURIComponent(this.sandboxId)}:wait`, {
        query: { timeoutSeconds: seconds.toFixed(3), until },
        idempotent: true,
      });
      return true;
    } catch (e) {
      if (e instanceof PaddockError && e.code === 'not_found' && e.message.startsWith('unknown method')) {
        this.client.longPoll = false;
        return false;
      }
      throw e;
    }
  }

  private async requireRunning(): Promise<void> {
    await this.wait();
    if (this.state === 'STATE_COMPLETED') {
      throw new SandboxTerminatedError('failed_precondition', `sandbox ${this.sandboxId} already completed`, { reason: 'CWSANDBOX_SANDBOX_TERMINATED' });
    }
  }

  /**
   * Runs a command over the gateway's WebSocket exec stream. Returns at once; iterate
   * `process.stdout`/`stderr` for live output, `await process.result()` for the outcome.
   */
  exec(command: string[], opts: ExecOptions = {}): ExecProcess {
    if (!Array.isArray(command) || command.length === 0) throw new ValidationError('invalid_argument', 'Command cannot be empty');
    if (opts.cwd !== undefined && !opts.cwd.startsWith('/')) throw new ValidationError('invalid_argument', 'cwd must be an absolute path');
    return new ExecProcess(this.client, this.sandboxId, command, opts, () => this.requireRunning());
  }

  async readFile(path: string): Promise<Buffer> {
    await this.requireRunning();
    const res = await this.client.json<{ content: string }>('GET', `/v1/sandboxes/${encodeURIComponent(this.sandboxId)}:readFile`, { query: { path }, idempotent: true });
    return Buffer.from(res.content, 'base64');
  }

  async writeFile(path: string, content: string | Uint8Array): Promise<void> {
    await this.requireRunning();
    const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content);
    const base = `/v1/sandboxes/${encodeURIComponent(this.sandboxId)}`;
    if (bytes.length > INLINE_FILE_LIMIT) {
      await this.client.raw('PUT', `${base}/files`, { query: { path }, bytes, idempotent: true });
    } else {
      await this.client.json('POST', `${base}:writeFile`, { body: { path, content: bytes.toString('base64') }, idempotent: true });
    }
  }

  async listDir(path: string): Promise<FileEntry[]> {
    await this.requireRunning();
    const res = await this.client.json<{ entries: FileEntry[] }>('GET', `/v1/sandboxes/${encodeURIComponent(this.sandboxId)}:listDir`, { query: { path }, idempotent: true });
    return res.entries;
  }

  /**
   * The primary process's log as entries with byte offsets. With `follow`, a dropped connection
   * is resumed from the last offset (no gap, no duplicate), up to `maxResumes` times.
   */
  async *logs(opts: LogsOptions = {}): AsyncGenerator<LogEntry> {
    let fromOffset = opts.fromOffset;
    let resumes = 0;
    for (;;) {
      let res: Response;
      try {
        res = await this.client.raw('GET', `/v1/sandboxes/${encodeURIComponent(this.sandboxId)}/logs`, {
          query: {
            follow: opts.follow ?? false,
            ...(opts.container ? { container: opts.container } : {}),
            ...(fromOffset !== undefined ? { fromOffset } : {
              tailLines: opts.tailLines,
              sinceTime: opts.sinceTime instanceof Date ? opts.sinceTime.toISOString() : opts.sinceTime,
            }),
          },
          idempotent: true,
          signal: opts.signal,
        });
      } catch (e) {
        if (opts.follow && resumes < (opts.maxResumes ?? 3) && !(e instanceof PaddockError && !e.retryable)) {
          await sleep(backoffDelay(resumes++, 500, 4_000));
          continue;
        }
        throw e;
      }
      try {
        for await (const line of ndjsonLines(res)) {
          const v = JSON.parse(line) as { offset: number; stream: 'stdout' | 'stderr'; data: string; time: string; error?: unknown };
          if (v.error !== undefined) throw isErrorBody(v.error) ? errorFromBody(v.error) : new PaddockError('internal', 'log stream error');
          const entry: LogEntry = { offset: v.offset, stream: v.stream, data: Buffer.from(v.data, 'base64'), time: v.time };
          fromOffset = entry.offset + entry.data.length;
          yield entry;
        }
        return;
      } catch (e) {
        if (opts.signal?.aborted || e instanceof PaddockError || !opts.follow || resumes >= (opts.maxResumes ?? 3)) throw e;
        await sleep(backoffDelay(resumes++, 500, 4_000));
      }
    }
  }

  /**
   * Stops the sandbox and (by default) waits until the gateway reports it terminal. Concurrent
   * calls share one stop.
   */
  stop(opts: StopOptions = {}): Promise<void> {
    this.stopping ??= (async () => {
      try {
        await Sandbox.delete(this.sandboxId, { client: this.client, missingOk: opts.missingOk, gracePeriodSeconds: opts.gracePeriodSeconds });
      } catch (e) {
        if (e instanceof SandboxNotFoundError && opts.missingOk) return;
        throw e;
      }
      if (opts.wait === false) return;
      const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
      let interval = 10;
      while (!TERMINAL_STATES.has((await this.refresh()).status.state)) {
        if (Date.now() > deadline) throw new SandboxTimeoutError('deadline_exceeded', `sandbox ${this.sandboxId} did not stop in time`);
        await sleep(interval);
        interval = Math.min(500, interval * 1.5);
      }
    })();
    return this.stopping;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop({ missingOk: true });
  }
}

async function* ndjsonLines(res: Response): AsyncGenerator<string> {
  if (!res.body) return;
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buf += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line) yield line;
    }
  }
  const tail = buf.trim();
  if (tail) yield tail;
}

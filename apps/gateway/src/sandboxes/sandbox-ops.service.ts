import {
  MAX_INLINE_FILE_BYTES,
  PaddockError,
  STREAM_CHUNK_BYTES,
  type ExecResponse,
  type FileStatWire,
  type StreamFrame,
} from '@paddock/contracts';
import type { Principal } from '../auth/token-authenticator';
import type { RunnerClient, RunnerStream } from '../runners/runner-client';
import { invalid } from './request-parsing';
import type { SandboxLifecycleService } from './sandbox-lifecycle.service';
import type { SandboxRoute, SandboxRouteCache } from './sandbox-route-cache';
import { isTerminalRow, type SandboxRow, type SandboxView } from './sandbox-view';
import { withRunnerState, withUsage, type UsageLookup } from './live-status';

export interface UnaryExecInput {
  command?: unknown;
  argv?: unknown;
  env?: unknown;
  cwd?: unknown;
  timeoutSeconds?: unknown;
  maxOutputBytes?: unknown;
  stdin?: unknown;
  /** The container to run in; absent or empty = the primary. */
  container?: unknown;
}

export interface UnaryExecOutput {
  exitCode: number;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  stdoutBytesProduced: number;
  stderrBytesProduced: number;
  timedOut: boolean;
}

export interface LogLine {
  offset: number;
  stream: 'stdout' | 'stderr';
  data: string;
  time: string;
}

export interface ExecStreamInit {
  argv: string[];
  container?: string;
  env?: Record<string, string>;
  cwd?: string;
  tty?: boolean;
  cols?: number;
  rows?: number;
  timeoutSeconds?: number;
}

const stringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
const stringMap = (v: unknown): v is Record<string, string> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const UNARY_EXEC_CEILING_MS = 300_000;

/** A call's `container` (absent or empty = the primary); the runner refuses a name the sandbox has not got. */
export function optionalContainer(v: unknown): { container?: string } {
  if (v === undefined || v === null || v === '') return {};
  if (typeof v !== 'string') throw invalid('container must be a string', [{ field: 'container', rule: 'type', description: 'a container name' }]);
  return { container: v };
}

export function requireAbsolutePath(path: unknown, field = 'path'): string {
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw invalid(`${field} must be an absolute path`, [{ field, rule: 'absolute_path', description: 'must start with /' }]);
  }
  return path;
}

export function decodeBase64Field(v: unknown, field: string): Buffer {
  if (v === undefined || v === null || v === '') return Buffer.alloc(0);
  if (typeof v !== 'string' || !BASE64.test(v)) throw invalid(`${field} must be base64`, [{ field, rule: 'base64', description: 'standard base64' }]);
  return Buffer.from(v, 'base64');
}

const routeOf = (row: SandboxRow): SandboxRoute => ({ id: row.id, organizationId: row.organization_id, runnerId: row.runner_id });
const refOf = (route: SandboxRoute, path: string): { sandboxId: string; organizationId: string; path: string } => ({
  sandboxId: route.id,
  organizationId: route.organizationId,
  path,
});

function logsDeleted(row: SandboxRow): PaddockError {
  return new PaddockError('failed_precondition', `the logs of sandbox ${row.id} were deleted at ${new Date(row.logs_deleted_at ?? 0).toISOString()}`, {
    reason: 'CWSANDBOX_LOGS_DELETED',
  });
}

/** Turns a runner `error` frame into a PaddockError. */
export function frameError(f: StreamFrame): PaddockError {
  return f.header.error ? PaddockError.fromBody(f.header.error) : new PaddockError('internal', 'stream ended with an error');
}

/**
 * Data-plane operations on a placed sandbox, relayed to its owning runner. The sandbox is looked
 * up in the caller's organization first (foreign = not found); a terminal sandbox is refused here,
 * anything else is left to the runner, which knows its live state best.
 */
export class SandboxOpsService {
  constructor(
    private readonly lifecycle: SandboxLifecycleService,
    private readonly runners: RunnerClient,
    private readonly rpcTimeoutMs: number,
    /** Owning runners of live sandboxes; without it every call reads the database first. */
    private readonly routes?: SandboxRouteCache,
    /** A cached route is trusted only while its runner heartbeats (a lost runner's sandboxes go FAILED). */
    private readonly runnerIsFresh: (runnerId: string) => boolean = () => true,
    /** Live usage from the runners' heartbeats (`status.resourceUsage`); none without it. */
    private readonly usageOf?: UsageLookup,
  ) {}

  /** GetSandbox: the stored view plus the live usage its runner last reported. */
  async get(principal: Principal, id: string): Promise<SandboxView> {
    return withUsage(await this.lifecycle.get(principal, id), this.usageOf);
  }

  /**
   * `{id}:pause` and `{id}:resume`, relayed to the owning runner (which refuses them by name where
   * its backend cannot freeze a sandbox). Both are idempotent.
   */
  async setPaused(principal: Principal, id: string, paused: boolean): Promise<SandboxView> {
    const res = await this.onLive(principal, id, (route) =>
      this.runners.call(route.runnerId, paused ? 'pause' : 'resume', { sandboxId: route.id, organizationId: route.organizationId }),
    );
    return withRunnerState(await this.get(principal, id), res.sandbox);
  }

  /** The database's answer: not_found (missing or foreign), the terminal refusal, or the row. */
  private async liveRow(principal: Principal, id: string): Promise<SandboxRow> {
    const row = await this.lifecycle.load(principal, id);
    if (isTerminalRow(row)) {
      throw new PaddockError('failed_precondition', `sandbox is ${row.state} (${row.state_reason ?? 'no reason'})`, {
        reason: 'CWSANDBOX_SANDBOX_TERMINATED',
        metadata: { state: row.state },
      });
    }
    return row;
  }

  /**
   * Runs `fn` against the owning runner of a live sandbox. A cached route (see SandboxRouteCache)
   * is used only while its runner heartbeats. When the call fails on a cached route, the row is
   * read again, so a sandbox that ended meanwhile (news another gateway applied, or that is in
   * flight) gets exactly the database-first answer, the terminal refusal, instead of the runner's
   * wording of it; any other failure is the runner's own error, as before.
   */
  private async onLive<T>(principal: Principal, id: string, fn: (route: SandboxRoute) => Promise<T>): Promise<T> {
    const cached = this.routes?.get(principal.organizationId, id);
    if (!cached || !this.runnerIsFresh(cached.runnerId)) {
      const row = await this.liveRow(principal, id);
      this.routes?.remember(row);
      return fn(routeOf(row));
    }
    await this.lifecycle.checkSource(principal, cached.runnerId);
    try {
      return await fn(cached);
    } catch (e) {
      this.routes?.invalidate(id);
      const row = await this.liveRow(principal, id).catch((dbError: unknown) => {
        // The database's refusal wins; a database that cannot answer leaves the runner's error.
        throw dbError instanceof PaddockError ? dbError : e;
      });
      this.routes?.remember(row);
      throw e;
    }
  }

  async exec(principal: Principal, id: string, body: UnaryExecInput): Promise<UnaryExecOutput> {
    const argv = body.command ?? body.argv;
    if (!stringArray(argv) || argv.length === 0) {
      throw invalid('command cannot be empty', [{ field: 'command', rule: 'min_items', description: 'a non-empty argv list' }]);
    }
    if (body.env !== undefined && !stringMap(body.env)) throw invalid('env must map strings to strings', [{ field: 'env', rule: 'type', description: 'map<string,string>' }]);
    const env = stringMap(body.env) ? body.env : {};
    const cwd = body.cwd === undefined ? undefined : requireAbsolutePath(body.cwd, 'cwd');
    const timeoutSeconds = typeof body.timeoutSeconds === 'number' && body.timeoutSeconds > 0 ? body.timeoutSeconds : undefined;
    const maxOutputBytes = typeof body.maxOutputBytes === 'number' ? body.maxOutputBytes : 0;
    const stdin = decodeBase64Field(body.stdin, 'stdin');
    const container = optionalContainer(body.container);
    const res: ExecResponse = await this.onLive(principal, id, (route) => this.runners.call(
      route.runnerId,
      'exec',
      {
        sandboxId: route.id,
        organizationId: route.organizationId,
        argv,
        ...container,
        env,
        ...(cwd ? { cwd } : {}),
        ...(timeoutSeconds ? { timeoutSeconds } : {}),
        maxOutputBytes,
        ...(stdin.length ? { stdinBase64: stdin.toString('base64') } : {}),
      },
      // Without a command timeout the wait is still bounded (the Python client's request timeout).
      timeoutSeconds ? timeoutSeconds * 1000 + this.rpcTimeoutMs : UNARY_EXEC_CEILING_MS,
    ));
    return {
      exitCode: res.exitCode,
      stdout: res.stdoutBase64,
      stderr: res.stderrBase64,
      stdoutTruncated: res.stdoutTruncated,
      stderrTruncated: res.stderrTruncated,
      stdoutBytesProduced: res.stdoutBytesProduced,
      stderrBytesProduced: res.stderrBytesProduced,
      timedOut: res.timedOut,
    };
  }

  async writeFile(principal: Principal, id: string, path: unknown, content: Buffer, mode?: number): Promise<{ bytesWritten: number }> {
    const p = requireAbsolutePath(path);
    if (content.length <= MAX_INLINE_FILE_BYTES) {
      const res = await this.onLive(principal, id, (route) =>
        this.runners.call(route.runnerId, 'writeFile', { ...refOf(route, p), ...(mode !== undefined ? { mode } : {}), contentBase64: content.toString('base64') }),
      );
      return { bytesWritten: res.streamed ? content.length : res.bytesWritten };
    }
    const { stream } = await this.onLive(principal, id, (route) =>
      this.runners.openStream(route.runnerId, 'writeFile', { ...refOf(route, p), ...(mode !== undefined ? { mode } : {}) }),
    );
    try {
      for (let off = 0; off < content.length; off += STREAM_CHUNK_BYTES) {
        await stream.sendData('data', content.subarray(off, off + STREAM_CHUNK_BYTES));
      }
      stream.control({ kind: 'eof' });
      for (;;) {
        const f = await stream.next();
        if (!f) throw new PaddockError('unavailable', 'upload stream closed before the runner confirmed', { reason: 'CWSANDBOX_RUNNER_UNAVAILABLE' });
        if (f.header.kind === 'eof') return { bytesWritten: f.header.totalBytes ?? content.length };
        if (f.header.kind === 'error') throw frameError(f);
      }
    } finally {
      stream.close();
    }
  }

  async readFile(principal: Principal, id: string, path: unknown): Promise<Buffer> {
    const p = requireAbsolutePath(path);
    return this.onLive(principal, id, async (route) => {
      try {
        const res = await this.runners.call(route.runnerId, 'readFile', refOf(route, p));
        if (!res.streamed) return Buffer.from(res.contentBase64, 'base64');
      } catch (e) {
        if (!(e instanceof PaddockError) || e.reason !== 'CWSANDBOX_FILE_TOO_LARGE') throw e;
      }
      const chunks: Buffer[] = [];
      for await (const c of this.readFileStream(await this.openReadStream(route, p))) chunks.push(c);
      return Buffer.concat(chunks);
    });
  }

  /** Streams a file of any size (the raw-bytes GET). */
  async openFileStream(principal: Principal, id: string, path: unknown): Promise<AsyncGenerator<Buffer>> {
    const p = requireAbsolutePath(path);
    // Opened here, not lazily in the generator, so an unknown sandbox fails the request itself.
    return this.readFileStream(await this.onLive(principal, id, (route) => this.openReadStream(route, p)));
  }

  private async openReadStream(route: SandboxRoute, path: string): Promise<RunnerStream> {
    return (await this.runners.openStream(route.runnerId, 'readFile', refOf(route, path))).stream;
  }

  private async *readFileStream(stream: RunnerStream): AsyncGenerator<Buffer> {
    try {
      for (;;) {
        const f = await stream.next();
        if (!f) return;
        if (f.header.kind === 'data') yield Buffer.from(f.payload);
        else if (f.header.kind === 'eof') return;
        else if (f.header.kind === 'error') throw frameError(f);
      }
    } finally {
      stream.close();
    }
  }

  async listDir(principal: Principal, id: string, path: unknown): Promise<{ entries: FileStatWire[] }> {
    const p = requireAbsolutePath(path);
    return this.onLive(principal, id, (route) => this.runners.call(route.runnerId, 'listDir', refOf(route, p)));
  }

  async stat(principal: Principal, id: string, path: unknown): Promise<{ stat: FileStatWire }> {
    const p = requireAbsolutePath(path);
    return this.onLive(principal, id, (route) => this.runners.call(route.runnerId, 'stat', refOf(route, p)));
  }

  async remove(principal: Principal, id: string, path: unknown, recursive: boolean): Promise<Record<string, never>> {
    const p = requireAbsolutePath(path);
    await this.onLive(principal, id, (route) => this.runners.call(route.runnerId, 'remove', { ...refOf(route, p), recursive }));
    return {};
  }

  /**
   * Log lines for NDJSON. Logs stay readable after the sandbox ended, so no terminal check here.
   */
  async openLogs(
    principal: Principal,
    id: string,
    q: { follow?: boolean; tailLines?: number; sinceTime?: string; fromOffset?: number; container?: string },
  ): Promise<AsyncGenerator<LogLine>> {
    const row = await this.lifecycle.load(principal, id);
    if (row.logs_deleted_at) throw logsDeleted(row);
    if (q.fromOffset !== undefined && (q.tailLines !== undefined || q.sinceTime !== undefined)) {
      throw invalid('fromOffset is mutually exclusive with tailLines and sinceTime', [
        { field: 'fromOffset', rule: 'mutually_exclusive', description: 'resume with fromOffset alone' },
      ]);
    }
    const { stream } = await this.runners.openStream(row.runner_id, 'logs', {
      sandboxId: row.id,
      organizationId: row.organization_id,
      follow: q.follow ?? false,
      ...optionalContainer(q.container),
      ...(q.tailLines !== undefined ? { tailLines: q.tailLines } : {}),
      ...(q.sinceTime !== undefined ? { sinceTime: q.sinceTime } : {}),
      ...(q.fromOffset !== undefined ? { fromOffset: q.fromOffset } : {}),
    });
    return logLines(stream);
  }

  /**
   * DeleteSandboxLogs: destroys the retained logs of an ended sandbox. Refused while it is live;
   * idempotent once done. A runner that no longer knows the sandbox has no logs left for it.
   */
  async deleteLogs(principal: Principal, id: string): Promise<Record<string, never>> {
    const row = await this.lifecycle.load(principal, id);
    if (!isTerminalRow(row)) {
      throw new PaddockError('failed_precondition', `sandbox ${row.id} is ${row.state}: the logs of a live sandbox cannot be deleted; stop it first`, {
        reason: 'CWSANDBOX_SANDBOX_NOT_TERMINAL',
        metadata: { state: row.state },
      });
    }
    if (!row.logs_deleted_at) {
      try {
        await this.runners.call(row.runner_id, 'deleteLogs', { sandboxId: row.id, organizationId: row.organization_id });
      } catch (e) {
        if (!(e instanceof PaddockError && e.reason === 'CWSANDBOX_SANDBOX_NOT_FOUND')) throw e;
      }
      await this.lifecycle.markLogsDeleted(principal, row.id);
    }
    return {};
  }

  /** Opens an interactive exec on the owning runner. */
  async openExecStream(principal: Principal, id: string, init: ExecStreamInit): Promise<RunnerStream> {
    if (!stringArray(init.argv) || init.argv.length === 0) {
      throw invalid('command cannot be empty', [{ field: 'argv', rule: 'min_items', description: 'a non-empty argv list' }]);
    }
    if (init.cwd !== undefined) requireAbsolutePath(init.cwd, 'cwd');
    const { stream } = await this.onLive(principal, id, (route) => this.runners.openStream(route.runnerId, 'execStream', {
      sandboxId: route.id,
      organizationId: route.organizationId,
      argv: init.argv,
      ...optionalContainer(init.container),
      env: init.env ?? {},
      ...(init.cwd ? { cwd: init.cwd } : {}),
      tty: init.tty ?? false,
      ...(init.cols ? { cols: init.cols } : {}),
      ...(init.rows ? { rows: init.rows } : {}),
      ...(init.timeoutSeconds ? { timeoutSeconds: init.timeoutSeconds } : {}),
    }));
    return stream;
  }
}

async function* logLines(stream: RunnerStream): AsyncGenerator<LogLine> {
  try {
    for (;;) {
      const f = await stream.next();
      if (!f) return;
      const k = f.header.kind;
      if (k === 'stdout' || k === 'stderr') {
        yield { offset: f.header.offset ?? 0, stream: k, data: Buffer.from(f.payload).toString('base64'), time: f.header.time ?? new Date().toISOString() };
      } else if (k === 'eof' || k === 'exit') {
        return;
      } else if (k === 'error') {
        throw frameError(f);
      }
    }
  } finally {
    stream.close();
  }
}

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
import { isTerminalRow, type SandboxRow } from './sandbox-view';

export interface UnaryExecInput {
  command?: unknown;
  argv?: unknown;
  env?: unknown;
  cwd?: unknown;
  timeoutSeconds?: unknown;
  maxOutputBytes?: unknown;
  stdin?: unknown;
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
  ) {}

  private async live(principal: Principal, id: string): Promise<SandboxRow> {
    const row = await this.lifecycle.load(principal, id);
    if (isTerminalRow(row)) {
      throw new PaddockError('failed_precondition', `sandbox is ${row.state} (${row.state_reason ?? 'no reason'})`, {
        reason: 'CWSANDBOX_SANDBOX_TERMINATED',
        metadata: { state: row.state },
      });
    }
    return row;
  }

  async exec(principal: Principal, id: string, body: UnaryExecInput): Promise<UnaryExecOutput> {
    const argv = body.command ?? body.argv;
    if (!stringArray(argv) || argv.length === 0) {
      throw invalid('command cannot be empty', [{ field: 'command', rule: 'min_items', description: 'a non-empty argv list' }]);
    }
    if (body.env !== undefined && !stringMap(body.env)) throw invalid('env must map strings to strings', [{ field: 'env', rule: 'type', description: 'map<string,string>' }]);
    const cwd = body.cwd === undefined ? undefined : requireAbsolutePath(body.cwd, 'cwd');
    const timeoutSeconds = typeof body.timeoutSeconds === 'number' && body.timeoutSeconds > 0 ? body.timeoutSeconds : undefined;
    const maxOutputBytes = typeof body.maxOutputBytes === 'number' ? body.maxOutputBytes : 0;
    const stdin = decodeBase64Field(body.stdin, 'stdin');
    const row = await this.live(principal, id);
    const res: ExecResponse = await this.runners.call(
      row.runner_id,
      'exec',
      {
        sandboxId: row.id,
        organizationId: row.organization_id,
        argv,
        env: (body.env) ?? {},
        ...(cwd ? { cwd } : {}),
        ...(timeoutSeconds ? { timeoutSeconds } : {}),
        maxOutputBytes,
        ...(stdin.length ? { stdinBase64: stdin.toString('base64') } : {}),
      },
      // Without a command timeout the wait is still bounded (the Python client's request timeout).
      timeoutSeconds ? timeoutSeconds * 1000 + this.rpcTimeoutMs : UNARY_EXEC_CEILING_MS,
    );
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
    const row = await this.live(principal, id);
    const ref = { sandboxId: row.id, organizationId: row.organization_id, path: p, ...(mode !== undefined ? { mode } : {}) };
    if (content.length <= MAX_INLINE_FILE_BYTES) {
      const res = await this.runners.call(row.runner_id, 'writeFile', { ...ref, contentBase64: content.toString('base64') });
      return { bytesWritten: res.streamed ? content.length : res.bytesWritten };
    }
    const { stream } = await this.runners.openStream(row.runner_id, 'writeFile', ref);
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
    const row = await this.live(principal, id);
    const ref = { sandboxId: row.id, organizationId: row.organization_id, path: p };
    try {
      const res = await this.runners.call(row.runner_id, 'readFile', ref);
      if (!res.streamed) return Buffer.from(res.contentBase64, 'base64');
    } catch (e) {
      if (!(e instanceof PaddockError) || e.reason !== 'CWSANDBOX_FILE_TOO_LARGE') throw e;
    }
    const chunks: Buffer[] = [];
    for await (const c of this.readFileStream(row, p)) chunks.push(c);
    return Buffer.concat(chunks);
  }

  /** Streams a file of any size (the raw-bytes GET). */
  async openFileStream(principal: Principal, id: string, path: unknown): Promise<AsyncGenerator<Buffer>> {
    const p = requireAbsolutePath(path);
    const row = await this.live(principal, id);
    return this.readFileStream(row, p);
  }

  private async *readFileStream(row: SandboxRow, path: string): AsyncGenerator<Buffer> {
    const { stream } = await this.runners.openStream(row.runner_id, 'readFile', { sandboxId: row.id, organizationId: row.organization_id, path });
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
    const row = await this.live(principal, id);
    return this.runners.call(row.runner_id, 'listDir', { sandboxId: row.id, organizationId: row.organization_id, path: p });
  }

  async stat(principal: Principal, id: string, path: unknown): Promise<{ stat: FileStatWire }> {
    const p = requireAbsolutePath(path);
    const row = await this.live(principal, id);
    return this.runners.call(row.runner_id, 'stat', { sandboxId: row.id, organizationId: row.organization_id, path: p });
  }

  async remove(principal: Principal, id: string, path: unknown, recursive: boolean): Promise<Record<string, never>> {
    const p = requireAbsolutePath(path);
    const row = await this.live(principal, id);
    await this.runners.call(row.runner_id, 'remove', { sandboxId: row.id, organizationId: row.organization_id, path: p, recursive });
    return {};
  }

  /**
   * Log lines for NDJSON. Logs stay readable after the sandbox ended, so no terminal check here.
   */
  async openLogs(
    principal: Principal,
    id: string,
    q: { follow?: boolean; tailLines?: number; sinceTime?: string; fromOffset?: number },
  ): Promise<AsyncGenerator<LogLine>> {
    const row = await this.lifecycle.load(principal, id);
    if (q.fromOffset !== undefined && (q.tailLines !== undefined || q.sinceTime !== undefined)) {
      throw invalid('fromOffset is mutually exclusive with tailLines and sinceTime', [
        { field: 'fromOffset', rule: 'mutually_exclusive', description: 'resume with fromOffset alone' },
      ]);
    }
    const { stream } = await this.runners.openStream(row.runner_id, 'logs', {
      sandboxId: row.id,
      organizationId: row.organization_id,
      follow: q.follow ?? false,
      ...(q.tailLines !== undefined ? { tailLines: q.tailLines } : {}),
      ...(q.sinceTime !== undefined ? { sinceTime: q.sinceTime } : {}),
      ...(q.fromOffset !== undefined ? { fromOffset: q.fromOffset } : {}),
    });
    return logLines(stream);
  }

  /** Opens an interactive exec on the owning runner. */
  async openExecStream(principal: Principal, id: string, init: ExecStreamInit): Promise<RunnerStream> {
    if (!stringArray(init.argv) || init.argv.length === 0) {
      throw invalid('command cannot be empty', [{ field: 'argv', rule: 'min_items', description: 'a non-empty argv list' }]);
    }
    if (init.cwd !== undefined) requireAbsolutePath(init.cwd, 'cwd');
    const row = await this.live(principal, id);
    const { stream } = await this.runners.openStream(row.runner_id, 'execStream', {
      sandboxId: row.id,
      organizationId: row.organization_id,
      argv: init.argv,
      env: init.env ?? {},
      ...(init.cwd ? { cwd: init.cwd } : {}),
      tty: init.tty ?? false,
      ...(init.cols ? { cols: init.cols } : {}),
      ...(init.rows ? { rows: init.rows } : {}),
      ...(init.timeoutSeconds ? { timeoutSeconds: init.timeoutSeconds } : {}),
    });
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

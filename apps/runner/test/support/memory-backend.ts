import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { lstat, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { FULL_CAPABILITIES, type RunnerCapabilities, type SandboxState, type SandboxStateReason } from '@paddock/contracts';
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
} from '../../src/backend/sandbox-backend';

interface MemSandbox {
  spec: LaunchSpec;
  state: SandboxState;
  root: string;
  startedAt: Date;
  log: LogChunk[];
}

/**
 * A minimal in-test backend for the service's UNIT tests only (admission, idempotency, lifecycle,
 * recovery bookkeeping). No isolation at all: commands run as host processes in a per-sandbox
 * temporary directory. Integration tests use the real LocalBackend.
 */
export class MemoryBackend implements SandboxBackend {
  readonly kind = 'local' as const;
  readonly sandboxes = new Map<string, MemSandbox>();
  readonly launches: LaunchSpec[] = [];
  readonly stops: { sandboxId: string; grace: number; reason: SandboxStateReason }[] = [];
  readonly reaped: { sandboxId: string; reason: SandboxStateReason }[] = [];
  /** When false, launched sandboxes stay CREATING until `markRunning`. */
  autoRun = true;
  caps: RunnerCapabilities = { ...FULL_CAPABILITIES, isolation: 'namespaces' };
  private listeners: ((e: BackendEvent) => void)[] = [];

  capabilities(): RunnerCapabilities {
    return this.caps;
  }
  onEvent(listener: (e: BackendEvent) => void): void {
    this.listeners.push(listener);
  }
  emit(e: Omit<BackendEvent, 'at'>): void {
    const sb = this.sandboxes.get(e.sandboxId);
    if (sb) sb.state = e.state;
    for (const l of this.listeners) l({ ...e, at: new Date() });
  }

  async launch(spec: LaunchSpec): Promise<void> {
    if (this.sandboxes.has(spec.sandboxId)) return;
    this.launches.push(spec);
    const root = mkdtempSync(join(tmpdir(), 'paddock-mem-'));
    this.sandboxes.set(spec.sandboxId, { spec, state: 'STATE_CREATING', root, startedAt: new Date(), log: [] });
    setImmediate(() => {
      this.emit({ sandboxId: spec.sandboxId, state: 'STATE_CREATING' });
      if (this.autoRun) this.emit({ sandboxId: spec.sandboxId, state: 'STATE_RUNNING' });
    });
  }

  markRunning(sandboxId: string): void {
    this.emit({ sandboxId, state: 'STATE_RUNNING' });
  }

  finish(sandboxId: string, exitCode: number): void {
    this.emit({ sandboxId, state: exitCode === 0 ? 'STATE_COMPLETED' : 'STATE_FAILED', reason: 'EXITED', exitCode });
  }

  async stop(sandboxId: string, grace: number, reason: SandboxStateReason): Promise<void> {
    this.stops.push({ sandboxId, grace, reason });
    setImmediate(() => this.emit({ sandboxId, state: 'STATE_COMPLETED', reason: 'EXITED', exitCode: 137 }));
  }

  private path(sandboxId: string, p: string): string {
    const sb = this.sandboxes.get(sandboxId);
    if (!sb) throw new Error(`no sandbox ${sandboxId}`);
    return join(sb.root, p);
  }

  async exec(sandboxId: string, req: ExecRequest): Promise<ExecResult> {
    const proc = await this.execStream(sandboxId, req);
    if (req.stdin) proc.stdin.end(req.stdin);
    else proc.stdin.end();
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    proc.stdout.on('data', (b: Buffer) => out.push(b));
    proc.stderr.on('data', (b: Buffer) => err.push(b));
    const { exitCode } = await proc.exited;
    const stdout = Buffer.concat(out);
    const stderr = Buffer.concat(err);
    return {
      exitCode: exitCode ?? -1,
      stdout,
      stderr,
      stdoutTruncated: false,
      stderrTruncated: false,
      stdoutBytes: stdout.length,
      stderrBytes: stderr.length,
      timedOut: false,
    };
  }

  async execStream(sandboxId: string, req: ExecStreamRequest): Promise<ExecProcess> {
    const [cmd, ...args] = req.argv;
    const child = spawn(cmd as string, args, { cwd: this.path(sandboxId, '/'), env: { PATH: process.env.PATH, ...req.env } });
    const exited = new Promise<{ exitCode: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.once('close', (exitCode, signal) => resolve({ exitCode, signal }));
      // A command that cannot be found or run ends as the local backend's does: exit 127.
      child.once('error', () => resolve({ exitCode: 127, signal: null }));
    });
    child.stdin.on('error', () => undefined);
    return {
      stdin: child.stdin,
      stdout: child.stdout,
      stderr: child.stderr,
      resize: () => undefined,
      kill: (s) => void child.kill(s ?? 'SIGKILL'),
      exited,
    };
  }

  async readFile(sandboxId: string, path: string): Promise<Readable> {
    const p = this.path(sandboxId, path);
    await lstat(p);
    return createReadStream(p);
  }

  async writeFile(sandboxId: string, path: string, content: Readable | Buffer): Promise<void> {
    const p = this.path(sandboxId, path);
    await mkdir(dirname(p), { recursive: true });
    if (Buffer.isBuffer(content)) return writeFile(p, content);
    await pipeline(content, createWriteStream(p));
  }

  async listDir(sandboxId: string, path: string): Promise<FileStat[]> {
    const p = this.path(sandboxId, path);
    const names = await readdir(p);
    return Promise.all(names.map((n) => this.stat(sandboxId, join(path, n))));
  }

  async stat(sandboxId: string, path: string): Promise<FileStat> {
    const s = await lstat(this.path(sandboxId, path));
    const type = s.isFile() ? 'file' : s.isDirectory() ? 'directory' : s.isSymbolicLink() ? 'symlink' : 'other';
    return { path, type, size: s.size, mode: s.mode & 0o7777, modifiedAt: s.mtime };
  }

  async remove(sandboxId: string, path: string, recursive: boolean): Promise<void> {
    await rm(this.path(sandboxId, path), { recursive });
  }

  readonly logsDeleted: string[] = [];
  async deleteLogs(sandboxId: string): Promise<void> {
    const sb = this.sandboxes.get(sandboxId);
    if (sb) sb.log = [];
    this.logsDeleted.push(sandboxId);
  }

  async *logs(sandboxId: string, req: LogRequest): AsyncIterable<LogChunk> {
    const sb = this.sandboxes.get(sandboxId);
    if (!sb) return;
    for (const c of sb.log) if (c.offset >= (req.fromOffset ?? 0)) yield c;
  }

  /** What a restarted runner would find: set by the test. */
  recoverable: RecoveredSandbox[] = [];
  async recover(): Promise<RecoveredSandbox[]> {
    return this.recoverable;
  }

  async reap(sandboxId: string, reason: SandboxStateReason): Promise<void> {
    this.reaped.push({ sandboxId, reason });
  }

  async close(): Promise<void> {
    for (const sb of this.sandboxes.values()) rmSync(sb.root, { recursive: true, force: true });
  }
}

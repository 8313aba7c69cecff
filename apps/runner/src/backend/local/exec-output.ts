import { constants } from 'node:os';
import type { ExecResult } from '../sandbox-backend';

/**
 * What both exec clients (exec-client.ts, unary-exec.ts) share about a command's end: how long a
 * kill may go unanswered, the exit code it is reported as, and its output kept up to a cap.
 */

/** The exec daemon lives in the sandbox and may be frozen by the workload: a SIGKILL that gets no status in this time ends the exec on our side. */
export const KILL_REPORT_TIMEOUT_MS = 5_000;

/** The exit code, or 128 + the signal's number for a command a signal ended (as a shell reports it). */
export function exitCodeOf(exitCode: number | null, signal: string | null): number {
  return exitCode ?? 128 + (signal ? ((constants.signals as Record<string, number | undefined>)[signal] ?? 0) : 0);
}

/** A stream's output, kept up to `cap` bytes (views of the chunks, no copy) while everything it produced is counted. */
export class CappedOutput {
  private readonly parts: Buffer[] = [];
  private kept = 0;
  bytes = 0;

  constructor(private readonly cap: number) {}

  add(chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.kept < this.cap) {
      const part = chunk.subarray(0, this.cap - this.kept);
      this.parts.push(part);
      this.kept += part.length;
    }
  }

  get data(): Buffer {
    return Buffer.concat(this.parts);
  }

  get truncated(): boolean {
    return this.bytes > this.kept;
  }
}

/** A unary exec's result from its end and its two outputs. */
export function execResult(
  end: { exitCode: number | null; signal: string | null },
  stdout: CappedOutput,
  stderr: CappedOutput,
  timedOut: boolean,
): ExecResult {
  return {
    exitCode: exitCodeOf(end.exitCode, end.signal),
    stdout: stdout.data,
    stderr: stderr.data,
    stdoutTruncated: stdout.truncated,
    stderrTruncated: stderr.truncated,
    stdoutBytes: stdout.bytes,
    stderrBytes: stderr.bytes,
    timedOut,
  };
}

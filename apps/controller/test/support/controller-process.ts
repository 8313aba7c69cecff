import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT, waitFor } from '@paddock/testing';

export const CONTROLLER_ENTRY = join(REPO_ROOT, 'apps', 'controller', 'dist', 'main.js');

/** One structured log line of the controller (`{msg, ...fields}`). */
export interface LogLine {
  msg: string;
  [field: string]: unknown;
}

/**
 * The compiled controller as a real child process (`node dist/main.js`), so a test can SIGKILL it
 * (a crash, not a graceful stop) or SIGSTOP/SIGCONT it (a paused leader).
 */
export class ControllerProcess {
  readonly child: ChildProcess;
  readonly lines: LogLine[] = [];
  private stderr = '';

  constructor(env: NodeJS.ProcessEnv) {
    const clean = { ...process.env };
    delete clean.KUBERNETES_SERVICE_HOST;
    this.child = spawn(process.execPath, [CONTROLLER_ENTRY], { env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let buf = '';
    this.child.stdout?.on('data', (d: Buffer) => {
      buf += d.toString();
      const parts = buf.split('\n');
      buf = parts.pop() ?? '';
      for (const p of parts) {
        try {
          this.lines.push(JSON.parse(p) as LogLine);
        } catch {
          // not a log line
        }
      }
    });
    this.child.stderr?.on('data', (d: Buffer) => {
      this.stderr = (this.stderr + d.toString()).slice(-10_000);
    });
  }

  /** The last log lines and stderr, for failure messages. */
  tail(n = 15): string {
    return `${this.lines
      .slice(-n)
      .map((l) => JSON.stringify(l))
      .join('\n')}\nstderr: ${this.stderr.slice(-2000)}`;
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  logged(msg: string): LogLine[] {
    return this.lines.filter((l) => l.msg === msg);
  }

  async waitFor(msg: string, timeoutMs = 60_000): Promise<LogLine> {
    let found: LogLine | undefined;
    await waitFor(
      () => {
        if (this.exited) throw new Error(`controller exited (${this.child.exitCode ?? this.child.signalCode}): ${this.stderr}`);
        found = this.lines.find((l) => l.msg === msg);
        return found !== undefined;
      },
      { timeoutMs, what: `controller log "${msg}"` },
    );
    return found as LogLine;
  }

  signal(sig: NodeJS.Signals): void {
    if (!this.exited) this.child.kill(sig);
  }

  /** SIGKILL and wait until the process is really gone. */
  async kill(): Promise<void> {
    this.signal('SIGKILL');
    await waitFor(() => this.exited, { timeoutMs: 10_000, what: 'controller killed' });
  }

  /** SIGTERM; resolves with the exit code. */
  async terminate(): Promise<number | null> {
    this.signal('SIGCONT');
    this.signal('SIGTERM');
    await waitFor(() => this.exited, { timeoutMs: 20_000, what: 'controller exit' });
    return this.child.exitCode;
  }
}

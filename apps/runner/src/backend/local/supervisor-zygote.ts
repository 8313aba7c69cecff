import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';

/**
 * The zygote's whole environment, and so that of every supervisor, exec daemon and handler it
 * forks (the last two live inside sandboxes). Never the runner's own: that may hold the platform's
 * tokens, database URL or NATS settings, and a sandbox's processes could read them back. Every
 * program the supervisor starts gets an environment of its own (the sandbox's, from the plan).
 */
export const SUPERVISOR_ENV: Readonly<Record<string, string>> = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8' };

/**
 * The runner's handle on the supervisor zygote: one warm Python process that forks a supervisor
 * per sandbox when handed a plan path on stdin. Python's start-up (tens of ms) is paid once
 * instead of on every launch. Every supervisor writes its events, one JSON line each, to the
 * zygote's stdout, which is shared: lines are tagged with the sandbox id. The zygote exits on its
 * own when the runner goes away; the supervisors it forked live on.
 */
export class SupervisorZygote {
  private child?: ChildProcess;
  private closed = false;
  private buf = '';
  /** Every zygote this handle started, a replaced one included, so that close() ends them all. */
  private readonly started: ChildProcess[] = [];

  constructor(
    private readonly pythonPath: string,
    private readonly scriptPath: string,
    private readonly supervisorsProcs: string,
    private readonly logPath: string,
    private readonly onLine: (line: string) => void,
  ) {}

  /** Starts the zygote now (or again, if it died) so the first launch does not wait for it. */
  ensure(): ChildProcess {
    // A closed backend starts nothing: a zygote started after close() would outlive the runner.
    if (this.closed) throw new Error('the supervisor zygote is closed');
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) return this.child;
    const logFd = openSync(this.logPath, 'a');
    try {
      const child = spawn(this.pythonPath, ['-S', '-E', this.scriptPath, 'zygote', this.supervisorsProcs], {
        detached: true,
        env: SUPERVISOR_ENV,
        stdio: ['pipe', 'pipe', logFd],
      });
      child.on('error', () => undefined);
      child.stdin?.on('error', () => undefined);
      child.stdout?.setEncoding('utf8');
      child.stdout?.on('data', (chunk: string) => {
        this.buf += chunk;
        let nl;
        while ((nl = this.buf.indexOf('\n')) >= 0) {
          const line = this.buf.slice(0, nl);
          this.buf = this.buf.slice(nl + 1);
          if (line) this.onLine(line);
        }
      });
      child.stdout?.on('error', () => undefined);
      // The event stream keeps the runner's event loop alive until close(); the process handle
      // and stdin do not (the zygote is not what the runner waits for).
      child.unref();
      (child.stdin as { unref?: () => void } | null)?.unref?.();
      this.child = child;
      this.started.push(child);
      return child;
    } finally {
      closeSync(logFd);
    }
  }

  /** Forks a supervisor for the plan at `planPath`. */
  start(planPath: string): void {
    if (this.closed) throw new Error('the supervisor zygote is closed');
    this.ensure().stdin?.write(`${planPath}\n`);
  }

  pid(): number | undefined {
    return this.child?.pid;
  }

  close(): void {
    this.closed = true;
    this.child?.stdin?.end();
    this.child?.stdout?.destroy();
    for (const c of this.started) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }
}

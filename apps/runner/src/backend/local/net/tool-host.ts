import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { z } from 'zod';
import { supervisorSourceDir } from '../supervisor-files';

/** Runs a host tool with `input` on its stdin; resolves with its stdout, rejects with its own error text. */
export type ToolRunner = (exe: string, args: string[], input?: string) => Promise<string>;

/**
 * How long a run may take before it is refused. The tool goes on in the host (other runs share it,
 * so it is not killed for one); a timer per run also keeps the runner alive while a run is in
 * flight, as a spawned child's pipes did.
 */
const RUN_TIMEOUT_MS = 30_000;

/** The tool host's script, beside the supervisor's (see its header for the protocol). */
export const TOOL_HOST_ENTRY = 'toolhost.py';

/** One answer of the tool host (written by toolhost.py, read here: the two ends of one pipe). */
const ToolAnswerSchema = z.union([
  z.object({ id: z.number().int(), code: z.number().int(), out: z.string(), err: z.string() }),
  z.object({ id: z.number().int().nullable(), error: z.string() }),
]);

interface Pending {
  child: ChildProcessWithoutNullStreams;
  describe: string;
  resolve: (out: string) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * The runner's handle on its tool host (toolhost.py): one long-lived Python process that runs
 * `ip` for it. A fork of the runner's own process costs it milliseconds of a blocked event loop
 * (its page tables are copied; 4.7 ms p50 at 230 MB resident), and building and removing a
 * sandbox's link takes three runs; sent to the host, a run costs the runner a line on a pipe.
 * Runs are concurrent, as spawns were. The host is started on first use and again after it dies
 * (the runs it had are refused with that reason); it holds none of the runner's environment and
 * ends when the runner goes away (end of file on its stdin), or at close().
 */
export class ToolHost {
  private child: ChildProcessWithoutNullStreams | undefined;
  private buffered = '';
  private seq = 0;
  private closed = false;
  private readonly pending = new Map<number, Pending>();

  constructor(
    private readonly pythonPath: string,
    private readonly scriptPath: string = join(supervisorSourceDir(), TOOL_HOST_ENTRY),
  ) {}

  /** `ToolRunner` bound to this host. */
  readonly run: ToolRunner = (exe, args, input = '') => {
    if (this.closed) return Promise.reject(new Error(`${exe} ${args.join(' ')}: the runner's tool host is closed`));
    const child = this.child ?? this.start();
    const id = ++this.seq;
    const describe = `${exe} ${args.join(' ')}`;
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${describe}: no answer in ${RUN_TIMEOUT_MS} ms`));
      }, RUN_TIMEOUT_MS);
      this.pending.set(id, { child, describe, resolve, reject, timer });
      child.stdin.write(`${JSON.stringify({ id, argv: [exe, ...args], input })}\n`);
    });
  };

  /** The running host's process id, if one runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Ends the host; runs still in flight are refused. */
  close(): void {
    this.closed = true;
    const child = this.child;
    this.child = undefined;
    child?.kill('SIGKILL');
    if (child) this.refuseAll(child, 'the runner closed its tool host');
  }

  private start(): ChildProcessWithoutNullStreams {
    // -S -E -B: no site packages, no PYTHON* variables, no bytecode written beside the script.
    const child = spawn(this.pythonPath, ['-S', '-E', '-B', this.scriptPath], {
      stdio: ['pipe', 'pipe', 'pipe'],
      cwd: '/',
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C' },
    });
    this.child = child;
    this.buffered = '';
    let stderr = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text: string) => {
      if (this.child !== child) return;
      this.buffered += text;
      let nl;
      while ((nl = this.buffered.indexOf('\n')) >= 0) {
        const line = this.buffered.slice(0, nl);
        this.buffered = this.buffered.slice(nl + 1);
        this.settle(line);
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text: string) => (stderr = (stderr + text).slice(-2000)));
    child.stdin.on('error', () => undefined);
    // Idle, the host keeps no process alive; a run in flight does, through its caller.
    child.unref();
    for (const pipe of [child.stdin, child.stdout, child.stderr]) (pipe as unknown as { unref?: () => void }).unref?.();
    const gone = (): void => {
      if (this.child === child) this.child = undefined;
      this.refuseAll(child, `the runner's tool host ended (${stderr.trim() || `exit ${child.exitCode ?? child.signalCode ?? '?'}`})`);
    };
    child.once('exit', gone);
    child.once('error', gone);
    return child;
  }

  private settle(line: string): void {
    let answer: z.infer<typeof ToolAnswerSchema>;
    try {
      answer = ToolAnswerSchema.parse(JSON.parse(line));
    } catch {
      return; // not an answer of ours: nothing to settle (the host only writes answers)
    }
    if (answer.id === null) return;
    const p = this.pending.get(answer.id);
    if (!p) return;
    this.pending.delete(answer.id);
    clearTimeout(p.timer);
    if ('error' in answer) p.reject(new Error(`${p.describe}: ${answer.error}`));
    else if (answer.code === 0) p.resolve(answer.out);
    else p.reject(new Error(`${p.describe}: ${answer.err.trim() || `exit ${answer.code}`}`));
  }

  private refuseAll(child: ChildProcessWithoutNullStreams, why: string): void {
    for (const [id, p] of this.pending) {
      if (p.child !== child) continue;
      this.pending.delete(id);
      clearTimeout(p.timer);
      p.reject(new Error(`${p.describe}: ${why}`));
    }
  }
}

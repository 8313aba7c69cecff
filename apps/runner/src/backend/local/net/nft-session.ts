import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/** How long one script may take before the session is killed (and the next script starts another). */
const SCRIPT_TIMEOUT_MS = 10_000;

interface Waiting {
  /** The process the script went to: only its output or its end answers the script. */
  child: ChildProcessWithoutNullStreams;
  mark: string;
  resolve: (out: string) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * One long-lived `nft -i` that runs the scripts of the launch path (a sandbox's chain, a link's
 * removal). Starting `nft -f -` costs ~6.4 ms on this kind of machine, most of it the process and
 * its first netlink cache, against ~0.1 ms for a script sent to a running `nft -i`, and every
 * egress launch runs one.
 *
 * Each script is sent as one line (its commands joined by `;`), and nft applies a line as one
 * transaction, as `nft -f` does a file: all of it or none. After it comes a marker, a `list table`
 * of a table nobody creates, whose error (in the same stream, stderr merged into stdout) says
 * where the script's own output ends; an `Error:` before it means the script failed. Scripts run
 * one at a time. The process reads its commands from a pipe, so it ends with the runner even when
 * the runner is killed (end of file).
 */
export class NftSession {
  private child: ChildProcessWithoutNullStreams | undefined;
  private buffered = '';
  private waiting: Waiting | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private seq = 0;

  constructor(private readonly nftPath: string) {}

  /** Runs `script` (lines of nft commands) as one transaction; resolves with its output, rejects with nft's error. */
  run(script: string): Promise<string> {
    const line = script
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.length > 0)
      .join('; ');
    const p = this.queue.then(() => this.send(line));
    this.queue = p.catch(() => undefined);
    return p;
  }

  /** The running process's id, if one runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Ends the process (the next script would start another). */
  close(): void {
    this.child?.kill('SIGKILL');
    this.child = undefined;
  }

  private send(line: string): Promise<string> {
    if (line === '') return Promise.resolve('');
    const child = this.child ?? this.start();
    const mark = `pdk_mark_${process.pid}_${++this.seq}`;
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(new Error(`nft: no answer in ${SCRIPT_TIMEOUT_MS} ms to: ${line}`));
        this.close();
      }, SCRIPT_TIMEOUT_MS);
      this.waiting = { child, mark, resolve, reject, timer };
      child.stdin.write(`${line}\nlist table inet ${mark}\n`);
    });
  }

  private start(): ChildProcessWithoutNullStreams {
    // Through sh only to merge stderr into stdout: nft's errors then arrive in order with its output.
    // With none of the runner's environment: a process that lives as long as the runner holds no
    // more of it than it needs (and C messages, whatever the host's locale); sh adds PWD, here `/`.
    const child = spawn('/bin/sh', ['-c', 'exec "$0" -i 2>&1', this.nftPath], {
      stdio: ['pipe', 'pipe', 'pipe'],
      cwd: '/',
      env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C' },
    });
    this.child = child;
    this.buffered = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text: string) => {
      // A process already replaced (killed after a timeout) answers nothing any more.
      if (this.child !== child) return;
      this.buffered += text;
      this.settle();
    });
    child.stdin.on('error', () => undefined);
    // Idle, the session keeps no process alive (a script in flight does, by its timer).
    child.unref();
    for (const pipe of [child.stdin, child.stdout, child.stderr]) (pipe as unknown as { unref?: () => void }).unref?.();
    const gone = (): void => {
      if (this.child === child) this.child = undefined;
      if (this.waiting?.child === child) this.fail(new Error(`nft -i ended before answering (output: ${this.buffered.trim() || 'none'})`));
    };
    child.once('exit', gone);
    child.once('error', gone);
    return child;
  }

  /** Answers the script in flight once its marker's error has arrived in full. */
  private settle(): void {
    const w = this.waiting;
    if (!w) return;
    const markLine = `list table inet ${w.mark}\n`;
    const echo = this.buffered.indexOf(markLine);
    if (echo < 0) return;
    const caretEnd = this.buffered.indexOf('\n', echo + markLine.length);
    if (caretEnd < 0) return;
    const markError = this.buffered.lastIndexOf('Error:', echo);
    const out = this.buffered.slice(0, markError < 0 ? echo : markError);
    this.buffered = this.buffered.slice(caretEnd + 1);
    this.waiting = undefined;
    clearTimeout(w.timer);
    if (/^Error: /m.test(out)) w.reject(new Error(`nft: ${out.trim()}`));
    else w.resolve(out);
  }

  private fail(e: Error): void {
    const w = this.waiting;
    if (!w) return;
    this.waiting = undefined;
    clearTimeout(w.timer);
    w.reject(e);
  }
}

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as Readline from 'node:readline';
import { Writable } from 'node:stream';
import { effectiveSettings } from './config';
import { CliError, EXIT } from './errors';
import { ApiClient } from './http';
import { nodeRequire } from './lazy';

/** `node:readline` only when a command prompts (not on every start). */
const readline = (): typeof Readline => nodeRequire('node:readline') as typeof Readline;

/** Everything a command touches outside the process, so tests can drive the CLI in-process. */
export interface Io {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  readStdin: () => string;
  stdinIsTTY: boolean;
  stdoutIsTTY: boolean;
  /** Progress lines are drawn on stderr; undefined means "same as stdout". */
  stderrIsTTY?: boolean;
  env: NodeJS.ProcessEnv;
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export const processIo = (): Io => ({
  stdout: (s) => process.stdout.write(s),
  stderr: (s) => process.stderr.write(s),
  readStdin: () => readFileSync(0, 'utf8'),
  stdinIsTTY: Boolean(process.stdin.isTTY),
  stdoutIsTTY: Boolean(process.stdout.isTTY),
  stderrIsTTY: Boolean(process.stderr.isTTY),
  env: process.env,
});

export interface GlobalFlags {
  controlPlaneUrl?: string;
  gatewayUrl?: string;
}

export class Ctx {
  constructor(
    readonly io: Io,
    readonly flags: GlobalFlags,
  ) {}

  settings(): ReturnType<typeof effectiveSettings> {
    return effectiveSettings(this.io.env, this.flags);
  }

  controlPlane(): ApiClient {
    const s = this.settings();
    return new ApiClient(s.controlPlaneUrl, s.token);
  }

  gateway(): ApiClient {
    const s = this.settings();
    return new ApiClient(s.gatewayUrl, s.token);
  }

  out(text: string): void {
    this.io.stdout(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** Progress and notes go to stderr, and only on a terminal: stdout carries data only. */
  note(text: string): void {
    if (this.io.stdoutIsTTY || this.io.stdinIsTTY) this.io.stderr(`${text}\n`);
  }

  /**
   * Runs a long wait with a spinner and the elapsed time on stderr, only when the user watches a
   * terminal (stdout and stderr are TTYs); piped or redirected, the wait is silent so scripts and
   * `jq` see data only. The line is erased when the wait ends, whatever its outcome.
   */
  async withProgress<T>(label: string, fn: () => Promise<T>, intervalMs = 100): Promise<T> {
    const onTerminal = this.io.stdoutIsTTY && (this.io.stderrIsTTY ?? this.io.stdoutIsTTY);
    if (!onTerminal) return fn();
    const started = Date.now();
    let frame = 0;
    const draw = (): void => {
      const secs = Math.floor((Date.now() - started) / 1000);
      this.io.stderr(`\r\x1b[2K${SPINNER[frame++ % SPINNER.length] ?? '-'} ${label} (${secs}s)`);
    };
    draw();
    const timer = setInterval(draw, intervalMs);
    try {
      return await fn();
    } finally {
      clearInterval(timer);
      this.io.stderr('\r\x1b[2K');
    }
  }

  /** Asks a yes/no question on the terminal. Never called without a TTY. */
  async confirm(question: string): Promise<boolean> {
    const answer = await this.prompt(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  }

  async prompt(question: string, fallback = ''): Promise<string> {
    if (!this.io.stdinIsTTY) throw new CliError(`cannot prompt: stdin is not a terminal (${question.trim()})`, EXIT.usage);
    const rl = readline().createInterface({ input: process.stdin, output: process.stderr });
    try {
      const answer = await new Promise<string>((resolve) => rl.question(question, resolve));
      return answer === '' ? fallback : answer;
    } finally {
      rl.close();
    }
  }

  /** Like `prompt`, but what the user types is not echoed (tokens must not land in scrollback). */
  async promptSecret(question: string): Promise<string> {
    if (!this.io.stdinIsTTY) throw new CliError(`cannot prompt: stdin is not a terminal (${question.trim()})`, EXIT.usage);
    let muted = false;
    const output = new Writable({
      write(chunk: Buffer | string, _enc, done) {
        if (!muted) process.stderr.write(chunk);
        done();
      },
    });
    const rl = readline().createInterface({ input: process.stdin, output, terminal: true });
    try {
      const answer = await new Promise<string>((resolve) => {
        rl.question(question, resolve);
        muted = true;
      });
      process.stderr.write('\n');
      return answer;
    } finally {
      rl.close();
    }
  }

  /** Opens `$VISUAL`/`$EDITOR` (default vi) on the text and returns what the user saved. */
  editText(initial: string, suffix = '.yaml'): string {
    const editor = this.io.env.VISUAL || this.io.env.EDITOR || 'vi';
    const dir = mkdtempSync(join(tmpdir(), 'cwic-edit-'));
    const file = join(dir, `edit${suffix}`);
    try {
      writeFileSync(file, initial, { mode: 0o600 });
      const r = spawnSync('/bin/sh', ['-c', `${editor} "$1"`, 'sh', file], { stdio: 'inherit' });
      if (r.status !== 0) throw new CliError(`editor "${editor}" exited with ${r.status ?? r.signal}`, EXIT.refused);
      return readFileSync(file, 'utf8');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '@paddock/testing';

let sessions = 0;

/**
 * A real terminal: the command runs in a tmux pane on a private tmux server (its own socket, so
 * parallel engineers' tmux sessions are never touched), driven by `send-keys` and read with
 * `capture-pane`, exactly as a user at a keyboard would drive it.
 */
export class TmuxSession {
  private readonly socket: string;
  private readonly name = 'cwic';

  private constructor(socket: string) {
    this.socket = socket;
  }

  /** Starts `script` (a shell command line) with `env` in `cwd`; the pane stays open after it exits. */
  static start(script: string, env: NodeJS.ProcessEnv, cwd: string): TmuxSession {
    const s = new TmuxSession(`cwic-test-${process.pid}-${++sessions}`);
    const file = join(cwd, `.tmux-run-${sessions}.sh`);
    const exports = Object.entries(env)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `export ${k}='${String(v).replace(/'/g, `'\\''`)}'`)
      .join('\n');
    // The exit status is printed in the pane, then the pane idles so it can still be captured.
    writeFileSync(file, `${exports}\ncd '${cwd}'\n${script}\necho "[exit $?]"\nexec sleep 3600\n`);
    s.tmux(['new-session', '-d', '-s', s.name, '-x', '160', '-y', '50', `/bin/sh ${file}`]);
    return s;
  }

  private tmux(args: string[]): string {
    const r = spawnSync('tmux', ['-L', this.socket, '-f', '/dev/null', ...args], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`tmux ${args[0] ?? ''} failed: ${r.stderr}`);
    return r.stdout;
  }

  /** The visible screen plus scrollback, as text. */
  screen(): string {
    return this.tmux(['capture-pane', '-p', '-J', '-S', '-200', '-t', this.name]);
  }

  /** Types text (literally) and optionally presses Enter. */
  type(text: string, enter = true): void {
    if (text) this.tmux(['send-keys', '-t', this.name, '-l', text]);
    if (enter) this.tmux(['send-keys', '-t', this.name, 'Enter']);
  }

  async waitForText(text: string | RegExp, timeoutMs = 30_000): Promise<string> {
    let last = '';
    try {
      return await waitFor(
        () => {
          last = this.screen();
          return (typeof text === 'string' ? last.includes(text) : text.test(last)) ? last : undefined;
        },
        { timeoutMs, intervalMs: 100, what: `terminal to show ${String(text)}` },
      );
    } catch (e) {
      throw new Error(`${e instanceof Error ? e.message : String(e)}\n--- screen ---\n${last}`);
    }
  }

  /** Waits for the command to end and returns its exit status (printed by the wrapper). */
  async exitCode(timeoutMs = 30_000): Promise<number> {
    const screen = await this.waitForText(/\[exit \d+\]/, timeoutMs);
    return Number(/\[exit (\d+)\]/.exec(screen)?.[1]);
  }

  kill(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server'], { stdio: 'ignore' });
  }
}

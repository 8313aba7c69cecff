import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** `clients/python`. */
export const CLIENT_DIR = resolve(__dirname, '..', '..');
export const CLIENT_SRC = join(CLIENT_DIR, 'src');

/** The system interpreter (Debian's), as users of the client run it; PADDOCK_PYTHON overrides. */
export const PYTHON = process.env.PADDOCK_PYTHON ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');

export interface PythonRun {
  code: number | null;
  output: string;
}

/** Runs the interpreter synchronously (quick commands: listing, compiling). */
export function pythonSync(args: string[], env: NodeJS.ProcessEnv = {}): PythonRun {
  const r = spawnSync(PYTHON, args, { cwd: CLIENT_DIR, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, output: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
}

/** Runs a command without blocking the event loop, killed (by its pid) after `timeoutMs`. */
export function runCommand(command: string, args: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs: number; cwd?: string }): Promise<PythonRun> {
  return new Promise((resolvePromise) => {
    const child = spawn(command, args, { cwd: opts.cwd ?? CLIENT_DIR, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (d: Buffer): void => {
      output = (output + d.toString()).slice(-200_000);
    };
    child.on('error', (e) => (output += `\n${String(e)}`));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => {
      output += `\n[killed after ${opts.timeoutMs} ms]`;
      child.kill('SIGKILL');
    }, opts.timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, output });
    });
  });
}

import { spawn } from 'node:child_process';

/** Runs `ip` or `nft` with a script on stdin; rejects with the tool's own error text. */
export function runTool(exe: string, args: string[], input = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(exe, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(Buffer.concat(out).toString());
      else reject(new Error(`${exe} ${args.join(' ')}: ${Buffer.concat(err).toString().trim() || `exit ${code}`}`));
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

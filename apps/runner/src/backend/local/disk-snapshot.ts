import { spawn } from 'node:child_process';
import { PaddockError } from '@paddock/contracts';
import type { DiskArchiveSink } from '../sandbox-backend';
import { request } from './socket-io';

/** How long a capture may keep a sandbox frozen before its supervisor thaws it regardless. */
const HOLD_SECONDS = 300;

/**
 * Captures a running sandbox's disk (its `/workspace` and `/tmp`, the tmpfs the supervisor mounted
 * at `<sandbox dir>/disk`) as a tar stream, with the sandbox frozen meanwhile so the archive is
 * consistent. GNU tar reads as root from the host side: symlinks are archived as links (never
 * followed), empty directories and every mode are kept, owners numerically. It writes straight
 * into a file when the store is local (half the frozen time of piping through the runner), or
 * into `write` (a remote store); the sandbox thaws once it is done, or failed. The archive cannot
 * outgrow the sandbox's disk, which is capped (plus tar's headers).
 */
export async function captureDisk(
  socketPath: string,
  sandboxId: string,
  diskDir: string,
  out: DiskArchiveSink,
): Promise<{ frozenMs: number }> {
  const held = await request(socketPath, { op: 'hold', seconds: HOLD_SECONDS });
  if (held.ok !== true) {
    throw new PaddockError('failed_precondition', `sandbox ${sandboxId} cannot be captured: ${held.message ?? 'it is not running'}`, {
      reason: 'CWSANDBOX_SANDBOX_NOT_RUNNING',
      metadata: { sandboxId },
    });
  }
  const started = performance.now();
  try {
    const toFile = 'file' in out ? out.file : undefined;
    const tar = spawn('tar', ['--numeric-owner', '--sparse', '-cf', toFile ?? '-', '-C', diskDir, '.'], { stdio: ['ignore', toFile ? 'ignore' : 'pipe', 'pipe'] });
    let stderr = '';
    tar.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    const exited = new Promise<number | null>((resolve, reject) => {
      tar.once('error', reject);
      tar.once('close', (code) => resolve(code));
    });
    try {
      if ('write' in out && tar.stdout) await out.write(tar.stdout);
    } catch (e) {
      tar.kill('SIGKILL');
      await exited.catch(() => undefined);
      throw e;
    }
    const code = await exited;
    if (code !== 0) throw new Error(`tar of ${diskDir} exited with ${code}: ${stderr.trim()}`);
  } finally {
    await request(socketPath, { op: 'release' }).catch(() => undefined);
  }
  return { frozenMs: performance.now() - started };
}

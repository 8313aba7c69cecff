import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { PaddockError } from '@paddock/contracts';
import { request } from './socket-io';

/** How long a capture may keep a sandbox frozen before its supervisor thaws it regardless. */
const HOLD_SECONDS = 300;

/**
 * Captures a running sandbox's disk (its `/workspace` and `/tmp`, the tmpfs the supervisor mounted
 * at `<sandbox dir>/disk`) as a tar stream, with the sandbox frozen meanwhile so the archive is
 * consistent. GNU tar reads as root from the host side: symlinks are archived as links (never
 * followed), empty directories and every mode are kept, owners numerically. `write` consumes the
 * stream (into the snapshot store); the sandbox thaws once it is done, or failed.
 */
export async function captureDisk(
  socketPath: string,
  sandboxId: string,
  diskDir: string,
  write: (archive: Readable) => Promise<void>,
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
    const tar = spawn('tar', ['--numeric-owner', '--sparse', '-cf', '-', '-C', diskDir, '.'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    tar.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    const exited = new Promise<number | null>((resolve, reject) => {
      tar.once('error', reject);
      tar.once('close', (code) => resolve(code));
    });
    try {
      await write(tar.stdout);
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

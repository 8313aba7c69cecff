import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PaddockError, type SandboxStateReason } from '@paddock/contracts';
import { request } from './socket-io';

/**
 * Pause and resume on the local backend. The sandbox's supervisor does the freezing (the cgroup v1
 * freezer controller, or cgroup v2's `cgroup.freeze`), because it also owns the lifetime: it stops
 * counting while frozen, moves its deadline by the time spent paused, and thaws before any stop
 * (frozen processes take no signal). It records the pause in the sandbox's event file
 * (`STATE_PAUSED`) and in `paused-at`, and the moved deadline in `deadline-ms`, so a restarted
 * runner adopts a paused sandbox as paused, with the lifetime it still has.
 */

export interface FreezeReply {
  /** The supervisor's deadline after the call (ms since the epoch). */
  deadlineMs?: number;
}

async function call(socketPath: string, sandboxId: string, op: 'pause' | 'resume', reason?: SandboxStateReason): Promise<FreezeReply> {
  const r = await request(socketPath, { op, ...(reason ? { reason } : {}) });
  if (r.ok !== true) {
    if (r.errno === 'ENOTRUNNING') {
      throw new PaddockError('failed_precondition', `sandbox ${sandboxId} is not running: it cannot ${op}`, {
        reason: 'CWSANDBOX_SANDBOX_NOT_RUNNING',
        metadata: { sandboxId },
      });
    }
    throw new PaddockError('internal', `sandbox ${sandboxId} could not ${op}: ${r.message ?? 'no detail'}`, { reason: 'CWSANDBOX_INTERNAL', metadata: { sandboxId } });
  }
  return typeof r.deadlineMs === 'number' ? { deadlineMs: r.deadlineMs } : {};
}

export const freezeSandbox = (socketPath: string, sandboxId: string, reason: SandboxStateReason): Promise<FreezeReply> => call(socketPath, sandboxId, 'pause', reason);
export const thawSandbox = (socketPath: string, sandboxId: string): Promise<FreezeReply> => call(socketPath, sandboxId, 'resume');

function readNumber(file: string): number | undefined {
  try {
    const n = Number(readFileSync(file, 'utf8').trim());
    return Number.isFinite(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** When the sandbox was frozen (ms since the epoch), or undefined when it is not paused. */
export function pausedAtMs(sandboxDir: string): number | undefined {
  const s = readNumber(join(sandboxDir, 'paused-at'));
  return s === undefined ? undefined : Math.round(s * 1000);
}

/** The deadline as the supervisor last moved it (resumes push it back), or undefined if never moved. */
export function movedDeadlineMs(sandboxDir: string): number | undefined {
  return readNumber(join(sandboxDir, 'deadline-ms'));
}

import { subjects, type SandboxStateEvent } from '@paddock/contracts';
import { connectNats } from '@paddock/nats';
import type { SandboxBackend } from './backend/sandbox-backend';
import { readSandboxMeta } from './service/launch-spec';
import { nextSequence } from './service/sandbox-record';

export type DecommissionReason = 'RUNNER_DELETED' | 'RUNNER_STOPPED';
const MESSAGES: Record<DecommissionReason, string> = {
  RUNNER_DELETED: 'the runner was deleted',
  RUNNER_STOPPED: 'the runner was stopped with the platform that started it',
};

/**
 * `PADDOCK_RUNNER_MODE=decommission`: what the controller runs when a runner is deleted, or when
 * the platform that started it stops (`PADDOCK_DECOMMISSION_REASON=RUNNER_STOPPED`). Sandboxes
 * outlive a runner process on purpose (a restarted runner adopts them), so both must reap them
 * explicitly: every sandbox the backend still holds is killed and released, and its end is
 * published with the reason so the gateway's records become terminal at once.
 */
export async function decommission(opts: {
  backend: SandboxBackend;
  runnerId: string;
  organizationId?: string;
  natsUrl: string;
  /** `RUNNER_DELETED` (the runner was deleted) or `RUNNER_STOPPED` (the platform that started it stopped). */
  reason: DecommissionReason;
  natsCredsFile?: string;
  log: (msg: string, fields?: Record<string, unknown>) => void;
}): Promise<number> {
  const found = await opts.backend.recover();
  const nc = await connectNats({ servers: opts.natsUrl, credsFile: opts.natsCredsFile, maxReconnectAttempts: 3, timeout: 3_000 }).catch((e: unknown) => {
    opts.log('Could not connect to NATS; sandbox ends are not published', { error: e instanceof Error ? e.message : String(e) });
    return undefined;
  });
  let failures = 0;
  for (const s of found) {
    try {
      await opts.backend.reap(s.sandboxId, opts.reason);
    } catch (e) {
      failures++;
      opts.log('Failed to reap sandbox', { sandboxId: s.sandboxId, error: String(e) });
      continue;
    }
    // The local backend keeps the organization in the sandbox's metadata label; pods carry it as a label.
    const organizationId = s.labels['paddock.dev/organization-id'] ?? readSandboxMeta(s.labels)?.organizationId ?? opts.organizationId;
    if (nc && organizationId) {
      const now = new Date();
      const event: SandboxStateEvent = {
        sandboxId: s.sandboxId,
        organizationId,
        runnerId: opts.runnerId,
        state: 'STATE_FAILED',
        reason: opts.reason,
        message: MESSAGES[opts.reason],
        at: now.toISOString(),
        sequence: nextSequence(0, now),
      };
      nc.publish(subjects.sandboxState(opts.runnerId), JSON.stringify(event));
    }
  }
  if (nc) await nc.drain().catch(() => undefined);
  await opts.backend.close();
  opts.log('Runner decommissioned', { reaped: found.length - failures, failures });
  return failures === 0 ? 0 : 1;
}

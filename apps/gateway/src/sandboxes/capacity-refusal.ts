import { PaddockError } from '@paddock/contracts';

/** A runner that refused a create for lack of capacity, with what it said (e.g. "2000m CPU wanted, 0m free"). */
export interface FullRunner {
  runnerId: string;
  message: string;
}

/** One of the caller's own live sandboxes on a full runner. */
export interface HoldingSandbox {
  id: string;
  runner_id: string;
  create_time: Date;
}

const OLDEST_SHOWN = 3;

function ago(from: Date, now: Date): string {
  const s = Math.max(0, Math.round((now.getTime() - from.getTime()) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  return `${Math.round(s / 3600)}h`;
}

/**
 * The refusal a user gets when every suitable runner is full: what each runner said, what of the
 * caller's own holds capacity there (count and oldest sandboxes; other organizations' sandboxes
 * are not theirs to see), and the commands that free it. The runners' own messages already name
 * the resource and the amounts.
 */
export function capacityRefusal(full: FullRunner[], holding: HoldingSandbox[], now: Date): PaddockError {
  const perRunner = full.map(({ runnerId, message }) => {
    const mine = holding.filter((h) => h.runner_id === runnerId);
    const said = message.replace(/^runner is at capacity: /, '').replace(/; retry later or on another runner$/, '');
    if (mine.length === 0) return `runner ${runnerId}: ${said}; none of it is held by your organization's sandboxes`;
    const oldest = mine.slice(0, OLDEST_SHOWN).map((h) => `${h.id} (${ago(h.create_time, now)} old)`);
    return `runner ${runnerId}: ${said}; your organization has ${mine.length} live sandbox${mine.length === 1 ? '' : 'es'} there, oldest ${oldest.join(', ')}`;
  });
  const free = holding.length
    ? 'Free capacity with `cwic sandbox stop ID` (or `--tag TAG`, `--all`), or run one-shot commands with `cwic sandbox run`, which stops its sandbox when done.'
    : 'Retry later, or ask an admin for more capacity.';
  return new PaddockError('resource_exhausted', `every suitable runner is at capacity: ${perRunner.join('; ')}. ${free}`, {
    reason: 'CWSANDBOX_RUNNER_AT_CAPACITY',
    metadata: { runners: full.map((r) => r.runnerId).join(','), liveSandboxes: String(holding.length) },
  });
}

import { TERMINAL_SANDBOX_STATE_RANK } from '@paddock/contracts';

/** Where an event or a row stands in a sandbox's lifecycle (the repository's ordering). */
export interface StatePosition {
  /** `SANDBOX_STATE_RANK` of the state. */
  rank: number;
  /** The runner's event sequence (0 for a create's reply, which carries none). */
  sequence: number;
}

/** A state event held back: applied when the create settles, or dropped as already outdone. */
export interface HeldEvent extends StatePosition {
  apply(): void;
  /** Called instead of `apply` when the settled row already outranks the event. */
  skip(): void;
}

/**
 * The sandboxes whose create this gateway is driving right now, and the runner state events for
 * them it holds back meanwhile.
 *
 * Why hold them: the runner publishes PENDING and CREATING (and RUNNING, for a warm pool's take)
 * before it replies to the create, so they arrive just ahead of the reply. Applied at once, each is
 * an UPDATE that locks the sandbox's row, and the create's own `acceptPlacement` (which writes the
 * same news, from the reply) then waits for that commit: the caller's reply waits on writes it does
 * not need. Held until the create settles, they are applied right after it, in arrival order, and
 * land on the accepted row, which they change only where they are newer (the repository's rank and
 * sequence rules), so the row ends exactly as if they had been applied first.
 *
 * An event the settled row already outranks (lower rank, or the same rank and no newer sequence,
 * or a row already ended) is dropped instead of sent: the repository's UPDATE would match no row
 * for it, now or later, since a row's rank and sequence only grow. A warm take's PENDING and
 * CREATING events end there, so the take's writes are its accept and its RUNNING event only.
 *
 * Only this gateway's own creates are held, and only until their runner call settles: an event
 * another gateway of the queue group receives is applied there as before.
 */
export class CreatesInFlight {
  private readonly held = new Map<string, { events: HeldEvent[]; settled?: StatePosition }>();

  /** The create of `sandboxId` starts (before its runner is asked). */
  begin(sandboxId: string): void {
    this.held.set(sandboxId, { events: [] });
  }

  /** Holds `event` while the create of `sandboxId` is in flight; false (not held) otherwise. */
  hold(sandboxId: string, event: HeldEvent): boolean {
    const entry = this.held.get(sandboxId);
    if (!entry) return false;
    entry.events.push(event);
    return true;
  }

  /** The create's own write landed: the row now stands at `row` (held events it outranks are dropped at `end`). */
  settle(sandboxId: string, row: StatePosition): void {
    const entry = this.held.get(sandboxId);
    if (entry) entry.settled = row;
  }

  /** The create settled (accepted, refused or left to the reconciler): applies what was held, in order. */
  end(sandboxId: string): void {
    const entry = this.held.get(sandboxId);
    this.held.delete(sandboxId);
    for (const event of entry?.events ?? []) {
      if (entry?.settled && outranks(entry.settled, event)) event.skip();
      else event.apply();
    }
  }

  /** Creates in flight (for tests and metrics). */
  get size(): number {
    return this.held.size;
  }
}

/** Whether a row at `row` ignores an event at `event` (the repository's observation guard). */
function outranks(row: StatePosition, event: StatePosition): boolean {
  return (
    row.rank >= TERMINAL_SANDBOX_STATE_RANK ||
    event.rank < row.rank ||
    (event.rank === row.rank && event.sequence <= row.sequence)
  );
}

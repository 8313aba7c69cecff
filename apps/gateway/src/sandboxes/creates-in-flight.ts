import { SANDBOX_STATE_RANK, TERMINAL_SANDBOX_STATE_RANK, type SandboxStateEvent } from '@paddock/contracts';
import type { RunnerObservation } from './sandbox.repository';

/** How long an accepted create's state rank is remembered to drop late, lower-ranked events unwritten. */
const RANK_FLOOR_MS = 30_000;
/** Most remembered ranks (a burst of creates); the oldest go first. */
const MAX_FLOORS = 10_000;

/**
 * State events of sandboxes whose create is in flight on this gateway. A runner publishes a
 * take's CREATING and RUNNING events before its create reply, and applying them meanwhile costs
 * two UPDATEs whose row locks the accept then waits for. Held here instead, they are settled
 * into the reply once it is in (foldHeld), and the accept writes them in its one statement.
 *
 * Safe with several gateways: an event another gateway receives is applied there as before (the
 * database's rank/sequence guards order it against the accept), and nothing here is ever
 * trusted beyond what the database would decide itself.
 */
export class CreatesInFlight {
  private readonly held = new Map<string, SandboxStateEvent[]>();
  /** Rank the row is known to have reached: the stored rank never goes down. */
  private readonly floors = new Map<string, { rank: number; until: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** From here until `end`, `hold` keeps this sandbox's events. */
  begin(id: string): void {
    this.held.set(id, []);
  }

  /** True when the event is held for its create (the caller must not apply it). */
  hold(evt: SandboxStateEvent): boolean {
    const h = this.held.get(evt.sandboxId);
    if (!h) return false;
    h.push(evt);
    return true;
  }

  /** The events held since `begin`, in arrival order; later events are no longer held. */
  end(id: string): SandboxStateEvent[] {
    const h = this.held.get(id) ?? [];
    this.held.delete(id);
    return h;
  }

  /** The row reached this rank (its accept returned it). */
  noteRank(id: string, rank: number): void {
    const t = this.now();
    this.floors.delete(id);
    this.floors.set(id, { rank, until: t + RANK_FLOOR_MS });
    // Insertion order is expiry order: drop expired entries from the front, and the oldest past the cap.
    for (const [k, v] of this.floors) {
      if (v.until > t && this.floors.size <= MAX_FLOORS) break;
      this.floors.delete(k);
    }
  }

  /**
   * An event ranked below what the row is known to have reached: the database would refuse it
   * (it never moves a state backwards), so it need not be sent.
   */
  belowKnownRank(evt: SandboxStateEvent): boolean {
    const f = this.floors.get(evt.sandboxId);
    if (!f) return false;
    if (f.until <= this.now()) {
      this.floors.delete(evt.sandboxId);
      return false;
    }
    return SANDBOX_STATE_RANK[evt.state] < f.rank;
  }
}

/**
 * Folds the events received before a create's reply from the runner that replied into the
 * reply's observation, as the database would apply them one after the other (the same rank and
 * sequence guards, the same field merges as the state-event UPDATE), so the accept writes once
 * what the events and the reply together say. A take's reply may still say CREATING while its
 * RUNNING event is already in: the folded observation says RUNNING, as the row did when the
 * events were written first. Events of another runner (`others`) are left to the usual write.
 */
export function foldHeld(
  held: SandboxStateEvent[],
  runnerId: string,
  reply: RunnerObservation,
): { observation: RunnerObservation; others: SandboxStateEvent[] } {
  let o = reply;
  const others: SandboxStateEvent[] = [];
  for (const e of held) {
    if (e.runnerId !== runnerId) {
      others.push(e);
      continue;
    }
    const rank = SANDBOX_STATE_RANK[e.state];
    const applies = o.rank < TERMINAL_SANDBOX_STATE_RANK && (o.rank < rank || (o.rank === rank && o.sequence < e.sequence));
    if (!applies) continue;
    o = {
      state: e.state,
      rank,
      // A resumed sandbox drops the reason it was paused for.
      reason: e.reason ?? (e.state === 'STATE_RUNNING' ? undefined : o.reason),
      message: e.message ?? o.message,
      exitCode: e.exitCode ?? o.exitCode,
      sequence: Math.max(o.sequence, e.sequence),
      // The first time RUNNING was seen is the start time.
      at: o.state === 'STATE_RUNNING' && e.state === 'STATE_RUNNING' ? o.at : new Date(e.at),
      effective: e.containerStatuses ? { ...(o.effective ?? {}), containerStatuses: e.containerStatuses } : o.effective,
    };
  }
  return { observation: o, others };
}

import type { SandboxRow } from './sandbox-view';
import { isTerminalRow } from './sandbox-view';

/** Where a live sandbox's data-plane traffic goes: the only facts the relay routes need. */
export interface SandboxRoute {
  id: string;
  organizationId: string;
  runnerId: string;
}

interface LiveEntry {
  route: SandboxRoute;
  expiresAt: number;
}

/**
 * Marks a sandbox that left the live set (terminal, or a delete was asked), so a database read
 * that started before it left cannot put it back. Kept long enough for any such read to have
 * finished; should one finish later still, the runner's refusal sends the caller to the row.
 */
interface RetiredEntry {
  retiredUntil: number;
}

const RETIRED_FOR_MS = 60_000;

/**
 * The owning runner of live sandboxes this gateway created or looked up, so exec and file calls
 * skip the database. Coherence rests on facts the repository guarantees:
 * - only rows a runner acknowledged are cached, and their `(organization, runner)` never changes
 *   afterwards (`reassign` needs an unacknowledged row; acknowledged rows are never deleted);
 * - what can change is "still live": a terminal observation, a terminal marking or a delete
 *   request retires the id here before the database write (see SandboxRepository);
 * - state events go to one gateway of the queue group, so another gateway's news reaches this
 *   one only through the database: entries expire after `ttlMs`, and a caller that gets a refusal
 *   from the runner on a cached route re-reads the row (`invalidate`) before answering.
 *
 * Lookups are by `(organizationId, id)`: an entry of another organization is a miss, so a foreign
 * id goes to the database and gets the ordinary not_found. Misses and not-found are not cached.
 */
export class SandboxRouteCache {
  private readonly entries = new Map<string, LiveEntry | RetiredEntry>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 100_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(organizationId: string, id: string): SandboxRoute | undefined {
    const e = this.entries.get(id);
    if (e === undefined || !('route' in e)) return undefined;
    if (e.expiresAt <= this.now()) {
      this.entries.delete(id);
      return undefined;
    }
    return e.route.organizationId === organizationId ? e.route : undefined;
  }

  /** Caches a row read from (or returned by) the database, when it is safe to: see the class. */
  remember(row: SandboxRow): void {
    if (this.ttlMs <= 0 || !row.runner_acknowledged || row.delete_requested_at !== null || isTerminalRow(row)) return;
    if (this.isRetired(row.id)) return;
    this.entries.delete(row.id);
    this.makeRoom();
    this.entries.set(row.id, { route: { id: row.id, organizationId: row.organization_id, runnerId: row.runner_id }, expiresAt: this.now() + this.ttlMs });
  }

  /** The sandbox left (or is leaving) the live set for good. */
  retire(id: string): void {
    if (this.ttlMs <= 0) return;
    this.entries.delete(id);
    this.makeRoom();
    this.entries.set(id, { retiredUntil: this.now() + Math.max(RETIRED_FOR_MS, this.ttlMs) });
  }

  /**
   * News that `runnerId` ended the sandbox, before it is written: retires it only if the cache
   * knows that runner as the owner (a reaped copy on another runner says nothing about this one).
   */
  retireIfOwnedBy(id: string, runnerId: string): void {
    const e = this.entries.get(id);
    if (e !== undefined && 'route' in e && e.route.runnerId === runnerId) this.retire(id);
  }

  /** A cached route may be stale (the runner refused it): the next lookup reads the database. */
  invalidate(id: string): void {
    const e = this.entries.get(id);
    if (e !== undefined && 'route' in e) this.entries.delete(id);
  }

  get size(): number {
    return this.entries.size;
  }

  private isRetired(id: string): boolean {
    const e = this.entries.get(id);
    if (e === undefined || 'route' in e) return false;
    if (e.retiredUntil > this.now()) return true;
    this.entries.delete(id);
    return false;
  }

  /** Oldest insertion first; a dropped entry only costs a database read later. */
  private makeRoom(): void {
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) return;
      this.entries.delete(oldest.value);
    }
  }
}

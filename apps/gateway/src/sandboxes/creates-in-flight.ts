/**
 * The sandboxes whose create this gateway is driving right now, and the runner state events for
 * them it holds back meanwhile.
 *
 * Why hold them: the runner publishes PENDING and CREATING (and RUNNING, for a warm pool's take)
 * before it replies to the create, so they arrive just ahead of the reply. Applied at once, each is
 * an UPDATE that locks the sandbox's row, and the create's own `acceptPlacement` (which writes the
 * same news, from the reply) then waits for that commit: the caller's reply waits on writes it does
 * not need. Held until the create settles and applied right after it, in arrival order, they land
 * on the accepted row and change it only where they are newer (the repository's rank and sequence
 * rules), so the row ends exactly as if they had been applied first.
 *
 * Only this gateway's own creates are held, and only until their runner call settles: an event
 * another gateway of the queue group receives is applied there as before.
 */
export class CreatesInFlight {
  private readonly held = new Map<string, (() => void)[]>();

  /** The create of `sandboxId` starts (before its runner is asked). */
  begin(sandboxId: string): void {
    this.held.set(sandboxId, []);
  }

  /** Holds `apply` while the create of `sandboxId` is in flight; false (not held) otherwise. */
  hold(sandboxId: string, apply: () => void): boolean {
    const queue = this.held.get(sandboxId);
    if (!queue) return false;
    queue.push(apply);
    return true;
  }

  /** The create settled (accepted, refused or left to the reconciler): applies what was held, in order. */
  end(sandboxId: string): void {
    const queue = this.held.get(sandboxId);
    this.held.delete(sandboxId);
    for (const apply of queue ?? []) apply();
  }

  /** Creates in flight (for tests and metrics). */
  get size(): number {
    return this.held.size;
  }
}

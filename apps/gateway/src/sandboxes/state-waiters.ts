/** One armed wake-up: fires on the next `notify` of its sandbox once armed, until disarmed. */
export interface ArmedWait {
  /** Resolves when the wake-up fires or after `ms`, whichever comes first. */
  within(ms: number): Promise<void>;
  disarm(): void;
}

/**
 * Wake-ups for long polls (`GET /v1/sandboxes/{id}:wait`). A waiter arms before it reads the row
 * (so a change landing between its read and its wait still wakes it), then waits until this
 * gateway applies a change to that sandbox (`notify`, called by the repository on every state
 * write) or until its re-check interval passes: runner events are shared among the gateways of a
 * queue group, so the change may have been applied by another gateway, and the waiter then finds
 * it by re-reading the row. A wake-up is only a hint; the row is the answer.
 *
 * Armed waiters are bounded: past `maxArmed`, a waiter just sleeps its interval (the long poll
 * degrades to polling the database, never to an error).
 */
export class SandboxStateWaiters {
  private readonly armed = new Map<string, Set<() => void>>();
  private count = 0;

  constructor(private readonly maxArmed = 10_000) {}

  arm(sandboxId: string): ArmedWait {
    let fired = false;
    let resolveFired: () => void = () => undefined;
    const firedPromise = new Promise<void>((r) => (resolveFired = r));
    const fire = (): void => {
      fired = true;
      resolveFired();
    };
    const tracked = this.count < this.maxArmed;
    if (tracked) {
      let set = this.armed.get(sandboxId);
      if (!set) {
        set = new Set();
        this.armed.set(sandboxId, set);
      }
      set.add(fire);
      this.count++;
    }
    return {
      within: (ms) =>
        fired
          ? Promise.resolve()
          : new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, ms);
              void firedPromise.then(() => {
                clearTimeout(timer);
                resolve();
              });
            }),
      disarm: () => {
        if (tracked) this.remove(sandboxId, fire);
      },
    };
  }

  /** Fires every armed wake-up of `sandboxId` (their waiters re-read the row). */
  notify(sandboxId: string): void {
    const set = this.armed.get(sandboxId);
    if (!set) return;
    for (const fire of set) fire();
  }

  /** Armed wake-ups right now (for tests and metrics). */
  get size(): number {
    return this.count;
  }

  private remove(sandboxId: string, fire: () => void): void {
    const set = this.armed.get(sandboxId);
    if (!set?.delete(fire)) return;
    this.count--;
    if (set.size === 0) this.armed.delete(sandboxId);
  }
}

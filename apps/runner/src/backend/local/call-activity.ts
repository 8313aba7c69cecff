/**
 * Calls being served on the backend's sandboxes (execs, file requests), for background work that
 * competes with them for the CPU: a pre-built network link's two `ip` runs landed on the commands
 * of busy sandboxes. Such work waits for the calls to pause, as the warm pools' refills do, but
 * never longer than `maxWaitMs`, so a steady stream of calls still gets its links built.
 * Launches are not counted: a link's replacement is built while the launch that took it goes on,
 * or a stream of creates one after the other is never quiet and builds its links inline.
 */
export class CallActivity {
  private inFlight = 0;
  private lastMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly quietMs = 200,
    private readonly maxWaitMs = 2_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** A call starts; the function returned ends it (once). */
  begin(): () => void {
    this.inFlight++;
    this.lastMs = this.now();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.inFlight--;
      this.lastMs = this.now();
    };
  }

  /** Milliseconds until it is quiet: none in flight and none for `quietMs`; 0 when it is. */
  waitMs(): number {
    if (this.inFlight > 0) return this.quietMs;
    return Math.max(0, this.lastMs + this.quietMs - this.now());
  }

  /** Resolves once it is quiet, or `maxWaitMs` after the call (whichever comes first), or when `stop()` says so. */
  async quiet(stop: () => boolean = () => false): Promise<void> {
    const until = this.now() + this.maxWaitMs;
    for (;;) {
      const wait = Math.min(this.waitMs(), until - this.now());
      if (wait <= 0 || stop()) return;
      await new Promise((r) => setTimeout(r, wait).unref());
    }
  }
}

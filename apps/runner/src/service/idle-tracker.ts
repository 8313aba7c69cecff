/**
 * Remembers when each sandbox last had exec, file or log traffic, for the policy's idle timeout
 * (`lifecycle.idleTimeoutSeconds`, a Paddock extension): one idle that long is paused, never
 * deleted. Pure bookkeeping on the runner's clock; the service sweeps it and does the pausing.
 */
export class IdleTracker {
  private readonly entries = new Map<string, { lastMs: number; timeoutMs: number }>();

  constructor(private readonly now: () => Date) {}

  /** Starts tracking a sandbox whose policy set an idle timeout (0 = never idle). */
  track(sandboxId: string, timeoutSeconds: number): void {
    if (timeoutSeconds > 0) this.entries.set(sandboxId, { lastMs: this.now().getTime(), timeoutMs: timeoutSeconds * 1000 });
  }

  /** Traffic: the idle clock starts again. */
  touch(sandboxId: string): void {
    const e = this.entries.get(sandboxId);
    if (e) e.lastMs = this.now().getTime();
  }

  forget(sandboxId: string): void {
    this.entries.delete(sandboxId);
  }

  /** Sandboxes idle for at least their timeout. */
  due(): string[] {
    const now = this.now().getTime();
    return [...this.entries].filter(([, e]) => now - e.lastMs >= e.timeoutMs).map(([id]) => id);
  }
}

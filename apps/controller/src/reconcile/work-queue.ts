/**
 * A keyed work queue (controller-runtime style): a key queued many times runs once; one key is
 * never processed concurrently with itself; failures retry with exponential backoff; a handler
 * may ask to be requeued after a delay (time-based waits such as "rollout still in progress").
 */
export type ReconcileResult = { requeueAfterMs?: number } | void;

export class WorkQueue {
  private readonly pending = new Set<string>();
  private readonly running = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly failures = new Map<string, number>();
  private readonly idleWaiters: (() => void)[] = [];
  private stopped = false;
  private active = 0;

  constructor(
    private readonly handler: (key: string) => Promise<ReconcileResult>,
    private readonly opts: { concurrency?: number; baseBackoffMs?: number; maxBackoffMs?: number; onError?: (key: string, e: unknown) => void } = {},
  ) {}

  add(key: string): void {
    if (this.stopped) return;
    const t = this.timers.get(key);
    if (t) {
      clearTimeout(t);
      this.timers.delete(key);
    }
    if (this.running.has(key)) {
      this.dirty.add(key);
      return;
    }
    this.pending.add(key);
    this.pump();
  }

  addAfter(key: string, ms: number): void {
    if (this.stopped || this.timers.has(key)) return;
    const t = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    t.unref();
    this.timers.set(key, t);
  }

  /** Resolves when nothing is pending or running (timers may still be armed). */
  async idle(): Promise<void> {
    if (this.pending.size === 0 && this.active === 0) return;
    await new Promise<void>((r) => this.idleWaiters.push(r));
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.pending.clear();
  }

  private pump(): void {
    const limit = this.opts.concurrency ?? 4;
    for (const key of [...this.pending]) {
      if (this.active >= limit) break;
      if (this.running.has(key)) continue;
      this.pending.delete(key);
      this.running.add(key);
      this.active++;
      void this.process(key);
    }
    if (this.pending.size === 0 && this.active === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  private async process(key: string): Promise<void> {
    try {
      const r = await this.handler(key);
      this.failures.delete(key);
      if (r && r.requeueAfterMs !== undefined) this.addAfter(key, r.requeueAfterMs);
    } catch (e) {
      const n = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, n);
      this.opts.onError?.(key, e);
      const delay = Math.min((this.opts.baseBackoffMs ?? 100) * 2 ** (n - 1), this.opts.maxBackoffMs ?? 30_000);
      this.addAfter(key, delay);
    } finally {
      this.running.delete(key);
      this.active--;
      if (this.dirty.delete(key)) this.pending.add(key);
      this.pump();
    }
  }
}

/**
 * A de-duplicating work queue: keys are reconciled asynchronously (never inside the store's event
 * dispatch, which would reorder watch events), and a handler can ask to be retried later.
 */
export class WorkQueue {
  private readonly dirty = new Set<string>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private scheduled = false;
  private closed = false;

  constructor(
    private readonly name: string,
    private readonly handler: (key: string) => { requeueAfterMs?: number } | void,
  ) {}

  add(key: string): void {
    if (this.closed) return;
    this.dirty.add(key);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.drain());
  }

  addAfter(key: string, ms: number): void {
    if (this.closed || this.timers.has(key)) return;
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        this.add(key);
      }, ms),
    );
  }

  private drain(): void {
    this.scheduled = false;
    const keys = [...this.dirty];
    this.dirty.clear();
    for (const key of keys) {
      if (this.closed) return;
      try {
        const result = this.handler(key);
        if (result?.requeueAfterMs !== undefined) this.addAfter(key, result.requeueAfterMs);
      } catch {
        // Conflicts and races with other writers: try again shortly, like a controller's rate-limited requeue.
        this.addAfter(key, 50);
      }
    }
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  toString(): string {
    return this.name;
  }
}

export const splitKey = (key: string): [string, string] => {
  const i = key.indexOf('/');
  return [key.slice(0, i), key.slice(i + 1)];
};

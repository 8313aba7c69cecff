/**
 * A single-consumer async queue: producers `push`, the consumer `for await`s. Used for live
 * stdout/stderr chunks and log entries.
 */
export class AsyncChannel<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiting: ((r: IteratorResult<T>) => void) | null = null;
  private failWaiting: ((e: unknown) => void) | null = null;
  private ended = false;
  private error: Error | null = null;

  push(item: T): void {
    if (this.ended) return;
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = null;
      this.failWaiting = null;
      w({ value: item, done: false });
    } else {
      this.items.push(item);
    }
  }

  end(error?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    if (error !== undefined) this.error = error instanceof Error ? error : new Error(JSON.stringify(error));
    if (this.waiting) {
      const w = this.waiting;
      const f = this.failWaiting;
      this.waiting = null;
      this.failWaiting = null;
      if (this.error !== null && f) f(this.error);
      else w({ value: undefined as T, done: true });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        const item = this.items.shift();
        if (item !== undefined) return Promise.resolve({ value: item, done: false });
        if (this.ended) {
          return this.error !== null ? Promise.reject(this.error) : Promise.resolve({ value: undefined as T, done: true });
        }
        return new Promise<IteratorResult<T>>((resolve, reject) => {
          this.waiting = resolve;
          this.failWaiting = reject;
        });
      },
    };
  }
}

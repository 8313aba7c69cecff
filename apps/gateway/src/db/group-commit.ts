/**
 * Group commit: calls that arrive while a statement of theirs is in flight (a burst of creates)
 * are coalesced into one multi-row statement, one round trip and one commit instead of one each.
 * A call alone adds no wait: it is flushed on the next turn of the event loop (so the calls parsed
 * in the same turn join it), and calls queued behind a statement in flight are flushed the moment
 * it returns, never on a timer.
 *
 * Each call still gets its own result or its own error: when the batched statement fails as a
 * whole (one bad row fails the statement), every call of the batch is retried alone (a statement
 * of one row), so the others land and the bad one reports what it alone did wrong.
 */
export interface GroupCommitOps<I, O> {
  /** Several calls as one statement (one transaction); results in the order of `items`. */
  many(items: I[]): Promise<O[]>;
  /** Calls with the same key never share a statement (one row updated twice in one UPDATE applies once). */
  key(item: I): string;
}

interface Pending<I, O> {
  item: I;
  resolve: (o: O) => void;
  reject: (e: unknown) => void;
}

export class GroupCommit<I, O> {
  private queue: Pending<I, O>[] = [];
  private inFlight = false;
  private scheduled = false;

  constructor(
    private readonly ops: GroupCommitOps<I, O>,
    /** Most rows in one statement (keeps its parameters well under Postgres's 65535). */
    private readonly maxBatch = 100,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.inFlight || this.scheduled || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  /** Takes up to maxBatch queued calls with distinct keys; later calls of a taken key wait their turn, in order. */
  private take(): Pending<I, O>[] {
    const keys = new Set<string>();
    const batch: Pending<I, O>[] = [];
    const rest: Pending<I, O>[] = [];
    for (const p of this.queue) {
      const k = this.ops.key(p.item);
      if (batch.length < this.maxBatch && !keys.has(k)) {
        keys.add(k);
        batch.push(p);
      } else {
        keys.add(k);
        rest.push(p);
      }
    }
    this.queue = rest;
    return batch;
  }

  private async flush(): Promise<void> {
    if (this.inFlight || this.queue.length === 0) return;
    this.inFlight = true;
    const batch = this.take();
    try {
      if (batch.length === 1) {
        await this.alone(batch[0] as Pending<I, O>);
      } else {
        let results: O[] | undefined;
        try {
          results = await this.ops.many(batch.map((p) => p.item));
        } catch {
          // Some row failed the statement, and with it the others: each alone says which. This also
          // covers a deadlock Postgres broke between two batches locking shared rows in another order.
          await Promise.all(batch.map((p) => this.alone(p)));
        }
        if (results) batch.forEach((p, i) => p.resolve(results[i] as O));
      }
    } finally {
      this.inFlight = false;
      // Whatever queued meanwhile goes now, as one statement.
      if (this.queue.length) void this.flush();
    }
  }

  /** One call as a statement of its own row. */
  private alone(p: Pending<I, O>): Promise<void> {
    return this.ops.many([p.item]).then((r) => p.resolve(r[0] as O), p.reject);
  }
}

import type { LogWaker } from './log-waker';

/** What one read of the log found. */
export type StepOutcome = 'progress' | 'idle' | 'held';

const MIN_RETRY_MS = 2;

/**
 * The loop every log consumer runs: read a batch (`step`), then sleep until a wake-up (a commit
 * somewhere), the poll interval, or, when committed rows wait behind an older open transaction,
 * a short backing-off retry (the end of that transaction sends no wake-up when it rolls back).
 * A failing step is retried with backoff; an error `endsLoop` accepts stops the loop.
 */
export abstract class LogLoop {
  private running = false;
  private loop: Promise<void> | undefined;
  private wakeSleeper: (() => void) | undefined;
  private woken = false;
  private unsubscribe: (() => void) | undefined;
  private readonly progressWaiters = new Set<() => void>();

  protected constructor(
    private readonly waker: LogWaker | undefined,
    private readonly pollIntervalMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  get isRunning(): boolean {
    return this.running;
  }

  /** Reads and handles one batch. */
  protected abstract step(): Promise<StepOutcome>;

  /** True for an error that ends the loop instead of being retried (a subclass may record it). */
  protected endsLoop(_error: unknown): boolean {
    return false;
  }

  /** Called for each retried error (handler or database). */
  protected countError(): void {}

  protected async startLoop(): Promise<void> {
    this.running = true;
    if (this.waker) this.unsubscribe = await this.waker.subscribe(() => this.wake());
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    await this.loop;
    this.loop = undefined;
  }

  private async run(): Promise<void> {
    let retryMs = MIN_RETRY_MS;
    let consecutiveErrors = 0;
    while (this.running) {
      let outcome: StepOutcome;
      try {
        outcome = await this.step();
      } catch (e) {
        this.onError(e);
        if (this.endsLoop(e)) {
          this.running = false;
          break;
        }
        this.countError();
        consecutiveErrors++;
        // Back off a failing batch; commits must not turn the retry into a hot loop, so only
        // stop() interrupts this sleep.
        await this.sleep(Math.min(this.pollIntervalMs, 10 * 2 ** Math.min(consecutiveErrors, 10)), false);
        continue;
      }
      consecutiveErrors = 0;
      this.notifyProgress();
      if (outcome === 'progress') {
        retryMs = MIN_RETRY_MS;
      } else if (outcome === 'held') {
        await this.sleep(retryMs);
        retryMs = Math.min(this.pollIntervalMs, retryMs * 2);
      } else {
        retryMs = MIN_RETRY_MS;
        await this.sleep(this.pollIntervalMs);
      }
    }
    this.notifyProgress();
  }

  protected wake(): void {
    const sleeper = this.wakeSleeper;
    if (sleeper) {
      this.wakeSleeper = undefined;
      sleeper();
    } else {
      this.woken = true;
    }
  }

  /** Sleeps up to `ms`; a wake-up ends it early when `wakeable`, stop() always does. */
  private sleep(ms: number, wakeable = true): Promise<void> {
    if (!this.running || (wakeable && this.woken)) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wakeSleeper = undefined;
        resolve();
      }, ms);
      const sleeper = (): void => {
        if (!wakeable && this.running) {
          this.wakeSleeper = sleeper; // a commit, not a stop: keep backing off
          return;
        }
        clearTimeout(timer);
        resolve();
      };
      this.wakeSleeper = sleeper;
    });
  }

  private notifyProgress(): void {
    for (const w of this.progressWaiters) w();
    this.progressWaiters.clear();
  }

  /** Resolves at the next step's end, or after `ms`. */
  protected nextProgress(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.progressWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.progressWaiters.add(done);
    });
  }
}

/** Thrown for an HTTP answer that retrying cannot fix (4xx: bad token, bad request...). */
export class PermanentError extends Error {}

export interface RetryOptions {
  signal?: AbortSignal;
  baseMs?: number;
  maxMs?: number;
  /** Called before each wait, so the operator sees why the controller is not up yet. */
  onRetry?: (attempt: number, delayMs: number, error: unknown) => void;
}

const abortError = (signal: AbortSignal | undefined): Error => (signal?.reason instanceof Error ? signal.reason : new Error('aborted'));

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(t);
      reject(abortError(signal));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Retries `fn` with capped exponential backoff (and jitter) until it succeeds, throws a
 * PermanentError, or `signal` aborts. Used at start-up: the control plane may come up after us.
 */
export async function withBackoff<T>(fn: () => Promise<T>, opts: RetryOptions = {}): Promise<T> {
  const base = opts.baseMs ?? 200;
  const max = opts.maxMs ?? 5_000;
  for (let attempt = 1; ; attempt++) {
    if (opts.signal?.aborted) throw abortError(opts.signal);
    try {
      return await fn();
    } catch (e) {
      if (e instanceof PermanentError) throw e;
      const delay = Math.min(max, base * 2 ** (attempt - 1)) * (0.75 + Math.random() * 0.5);
      opts.onRetry?.(attempt, Math.round(delay), e);
      await sleep(delay, opts.signal);
    }
  }
}

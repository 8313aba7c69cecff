import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The request an operation works for, carried through every await of its handling (and of the
 * work it starts), so that log lines and outgoing runner requests name it without each call
 * site passing it on.
 */
interface RequestContext {
  requestId: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs `fn` (and everything it schedules) as part of request `requestId`. */
export function withRequestId<T>(requestId: string, fn: () => T): T {
  return storage.run({ requestId }, fn);
}

/** The request id of the operation running now, if it runs for one. */
export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

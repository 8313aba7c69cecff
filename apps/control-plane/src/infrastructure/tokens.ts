import { randomUUID } from 'node:crypto';

/** Injection token of the shared `Kysely<CpDatabase>` (one pg pool per process). */
export const KYSELY = Symbol('KYSELY');
/** Injection token of the process's `NatsConnection`. */
export const NATS = Symbol('NATS');

/**
 * Every decision that depends on "now" (heartbeat staleness, maintenance windows, timestamps
 * written to events) reads this, never `new Date()`, so tests can move time with a FixedClock.
 */
export abstract class Clock {
  abstract now(): Date;
}

export class SystemClock extends Clock {
  now(): Date {
    return new Date();
  }
}

/** Server-assigned ids; tests may swap in a deterministic generator (it must still return UUIDs where a uuid column stores them). */
export abstract class IdGenerator {
  abstract uuid(): string;
}

export class RandomIdGenerator extends IdGenerator {
  uuid(): string {
    return randomUUID();
  }
}

/** Adapts a plain function (e.g. `sequentialIds()` from @paddock/testing) to an IdGenerator. */
export function idGeneratorFrom(next: () => string): IdGenerator {
  return new (class extends IdGenerator {
    uuid(): string {
      return next();
    }
  })();
}

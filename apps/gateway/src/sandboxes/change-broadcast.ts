import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { subjects } from '@paddock/contracts';
import type { SandboxStateWaiters } from './state-waiters';

/** What the repository tells after every write that moves a sandbox's state. */
export interface SandboxChangeListener {
  notify(sandboxId: string): void;
}

/**
 * Makes a state write on one gateway wake the long polls parked on EVERY gateway. Runner events
 * reach one gateway of the queue group; a `:wait` parked on another used to learn of the change
 * only at its next re-check (`GATEWAY_WAIT_RECHECK_MS`). Now the gateway that wrote the row
 * publishes the sandbox id after the write, and each gateway wakes its own waiters for it.
 *
 * No race: a waiter arms BEFORE it reads the row. A broadcast that arrives before the waiter arms
 * is for a write its read already sees; one that arrives after wakes it. Lost messages (a NATS
 * outage) only fall back to the re-check, which stays the safety net. A wake-up is a hint; the
 * row is the answer, so duplicates (our own message echoed back) cost one extra read at most and
 * are skipped by origin anyway.
 */
export class SandboxChangeBroadcast implements SandboxChangeListener {
  private sub: Subscription | null = null;
  /** Distinguishes our own messages from the other gateways'. */
  private readonly origin = `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;

  constructor(
    private readonly nc: NatsConnection,
    private readonly waiters: SandboxStateWaiters,
  ) {}

  start(): void {
    this.sub = this.nc.subscribe(subjects.sandboxRowChanged(), {
      callback: (err, msg) => {
        if (err) return;
        const [origin, sandboxId] = msg.string().split(' ', 2);
        if (origin !== this.origin && sandboxId) this.waiters.notify(sandboxId);
      },
    });
  }

  notify(sandboxId: string): void {
    this.waiters.notify(sandboxId);
    // Fire and forget: a closed or reconnecting connection drops the hint, never the write.
    if (this.nc.isClosed()) return;
    try {
      this.nc.publish(subjects.sandboxRowChanged(), `${this.origin} ${sandboxId}`);
    } catch {
      // draining or closed between the check and the publish: the re-check covers it
    }
  }

  stop(): void {
    this.sub?.unsubscribe();
    this.sub = null;
  }
}

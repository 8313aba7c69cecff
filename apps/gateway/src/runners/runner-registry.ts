import type { RunnerHeartbeat } from '@paddock/contracts';

export interface KnownRunner {
  heartbeat: RunnerHeartbeat;
  /** Gateway-local receive time (ms), so clock skew between machines does not matter. */
  receivedAt: number;
}

/**
 * What the gateway knows about runners, learned only from their heartbeats: it keeps working
 * while the control plane is down. Pure state; the NATS subscription feeds `observe`.
 */
export class RunnerRegistry {
  private readonly runners = new Map<string, KnownRunner>();

  constructor(
    private readonly now: () => number = Date.now,
    /** When the gateway started: silence before we could have heard anything is not loss. */
    private readonly startedAt: number = Date.now(),
  ) {}

  observe(hb: RunnerHeartbeat): void {
    const prev = this.runners.get(hb.runnerId);
    // Same instance, older sequence: an out-of-order delivery; keep the newer one.
    if (prev && prev.heartbeat.instanceId === hb.instanceId && prev.heartbeat.sequence > hb.sequence) return;
    this.runners.set(hb.runnerId, { heartbeat: hb, receivedAt: this.now() });
  }

  get(runnerId: string): KnownRunner | undefined {
    return this.runners.get(runnerId);
  }

  /** Heard from within 3 of its own heartbeat intervals. */
  isFresh(runnerId: string): boolean {
    const r = this.runners.get(runnerId);
    return !!r && this.now() - r.receivedAt <= 3 * r.heartbeat.intervalMs;
  }

  /**
   * For in-flight streams: not known to be gone. Fresh, or not heard of yet while this gateway is
   * younger than three default heartbeat intervals (a restarted gateway must not fail streams to
   * runners whose next heartbeat simply has not arrived yet).
   */
  mayBeAlive(runnerId: string, defaultIntervalMs = 2_000): boolean {
    if (this.runners.has(runnerId)) return this.isFresh(runnerId);
    return this.now() - this.startedAt <= 3 * defaultIntervalMs;
  }

  /**
   * Silent for longer than 3 intervals plus `graceMs`. A runner never heard of counts from the
   * gateway's start, so a gateway restart does not declare every runner lost at once.
   */
  isLost(runnerId: string, graceMs: number): boolean {
    const r = this.runners.get(runnerId);
    const t = this.now();
    if (!r) return t - this.startedAt > graceMs;
    return t - r.receivedAt > 3 * r.heartbeat.intervalMs + graceMs;
  }

  /** Placement candidates of one organization: fresh and not unhealthy. */
  candidates(organizationId: string): KnownRunner[] {
    return [...this.runners.values()].filter(
      (r) =>
        r.heartbeat.organizationId === organizationId &&
        r.heartbeat.health !== 'UNHEALTHY' &&
        this.isFresh(r.heartbeat.runnerId),
    );
  }

  /** Every fresh runner (the reconciler lists each one's inventory). */
  freshRunners(): KnownRunner[] {
    return [...this.runners.values()].filter((r) => this.isFresh(r.heartbeat.runnerId));
  }
}

import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { RunnerHeartbeatSchema, subjects } from '@paddock/contracts';
import type { HeartbeatView } from './drivers/local.driver';

/** Remembers the last heartbeat of each runner of this cluster (the local driver's health signal). */
export class HeartbeatTracker implements HeartbeatView {
  private readonly seen = new Map<string, { revision: number; health: string; receivedAt: number; intervalMs: number }>();
  private sub: Subscription | undefined;

  constructor(
    private readonly clusterId: () => string,
    private readonly onChange: (runnerId: string) => void,
  ) {}

  start(nc: NatsConnection): void {
    this.sub = nc.subscribe(subjects.allRunnerHeartbeats(), {
      callback: (err, msg) => {
        if (err) return;
        let parsed;
        try {
          parsed = RunnerHeartbeatSchema.safeParse(msg.json());
        } catch {
          return;
        }
        if (!parsed.success || parsed.data.clusterId !== this.clusterId()) return;
        const hb = parsed.data;
        const prev = this.seen.get(hb.runnerId);
        this.seen.set(hb.runnerId, { revision: hb.revision, health: hb.health, receivedAt: Date.now(), intervalMs: hb.intervalMs });
        // A first heartbeat, a new revision or a health change moves install status: reconcile now.
        if (!prev || prev.revision !== hb.revision || prev.health !== hb.health) this.onChange(hb.runnerId);
      },
    });
  }

  last(runnerId: string): { revision: number; health: string; receivedAt: number; intervalMs: number } | undefined {
    return this.seen.get(runnerId);
  }

  stop(): void {
    this.sub?.unsubscribe();
  }
}

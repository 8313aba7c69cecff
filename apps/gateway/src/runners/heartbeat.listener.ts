import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { RunnerHeartbeatSchema, subjects } from '@paddock/contracts';
import type { RunnerRegistry } from './runner-registry';

/** Feeds every runner heartbeat into the registry (no queue group: every gateway needs all). */
export class HeartbeatListener {
  private sub: Subscription | null = null;

  constructor(
    private readonly nc: NatsConnection,
    private readonly registry: RunnerRegistry,
    private readonly onError: (e: unknown) => void,
  ) {}

  start(): void {
    this.sub = this.nc.subscribe(subjects.allRunnerHeartbeats(), {
      callback: (err, msg) => {
        if (err) return this.onError(err);
        try {
          const hb = RunnerHeartbeatSchema.safeParse(msg.json());
          if (hb.success) this.registry.observe(hb.data);
          else this.onError(hb.error);
        } catch (e) {
          this.onError(e);
        }
      },
    });
  }

  stop(): void {
    this.sub?.unsubscribe();
  }
}

import { subjects, type RunnerHeartbeat } from '@paddock/contracts';
import type { NatsConnection } from '@nats-io/transport-node';

/**
 * Publishes the runner's heartbeat every `intervalMs`, and once at start so observers learn
 * about a (re)started runner without waiting a full period.
 */
export class HeartbeatPublisher {
  private timer: NodeJS.Timeout | undefined;
  private sequence = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly runnerId: string,
    private readonly intervalMs: number,
    private readonly build: (sequence: number, sentAt: Date) => RunnerHeartbeat,
  ) {}

  start(): void {
    this.beat();
    this.timer = setInterval(() => this.beat(), this.intervalMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Publishes one heartbeat now (also used after a policy change, so the new etag shows at once). */
  beat(): void {
    if (this.nc.isClosed()) return;
    const hb = this.build(this.sequence++, new Date());
    this.nc.publish(subjects.runnerHeartbeat(this.runnerId), JSON.stringify(hb));
  }
}

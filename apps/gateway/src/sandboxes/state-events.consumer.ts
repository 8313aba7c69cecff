import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { SandboxStateEventSchema, queueGroups, subjects } from '@paddock/contracts';
import type { GatewayMetrics } from '../observability/metrics';
import { observationFromEvent } from './observations';
import type { SandboxRepository } from './sandbox.repository';
import type { CreatesInFlight } from './creates-in-flight';

/**
 * Applies runner state events to the sandbox rows. Stale or duplicate events (lower sequence,
 * backwards state, from a runner that no longer owns the row) change nothing. One gateway of the
 * queue group handles each event; a lost event is repaired by the reconciler's `get`/`list`.
 */
export class StateEventsConsumer {
  private sub: Subscription | null = null;
  private inFlight = new Set<Promise<void>>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly repo: SandboxRepository,
    private readonly metrics: GatewayMetrics,
    private readonly onError: (e: unknown) => void,
    /** Events of creates in flight here are held for their create (see CreatesInFlight). */
    private readonly creates?: CreatesInFlight,
  ) {}

  start(): void {
    this.sub = this.nc.subscribe(subjects.allSandboxStates(), {
      queue: queueGroups.gateway,
      callback: (err, msg) => {
        if (err) return this.onError(err);
        let parsed;
        try {
          parsed = SandboxStateEventSchema.safeParse(msg.json());
        } catch (e) {
          return this.onError(e);
        }
        if (!parsed.success) return this.onError(parsed.error);
        const evt = parsed.data;
        if (this.creates?.hold(evt)) return;
        if (this.creates?.belowKnownRank(evt)) return void this.metrics.stateEvents.inc({ result: 'stale' });
        const p = this.repo
          .applyObservation(evt.sandboxId, evt.runnerId, observationFromEvent(evt))
          .then((applied) => void this.metrics.stateEvents.inc({ result: applied ? 'applied' : 'stale' }))
          .catch(this.onError)
          .finally(() => this.inFlight.delete(p));
        this.inFlight.add(p);
      },
    });
  }

  async stop(): Promise<void> {
    this.sub?.unsubscribe();
    await Promise.allSettled([...this.inFlight]);
  }
}

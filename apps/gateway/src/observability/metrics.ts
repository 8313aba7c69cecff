import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus metrics of one gateway process (own registry: several apps in one test process). */
export class GatewayMetrics {
  readonly registry = new Registry();
  readonly httpDuration = new Histogram({
    name: 'paddock_gateway_http_request_duration_seconds',
    help: 'HTTP request latency by route and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly creates = new Counter({
    name: 'paddock_gateway_sandbox_creates_total',
    help: 'Sandbox creates by outcome (accepted, accepted_uncertain, refused).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly stateEvents = new Counter({
    name: 'paddock_gateway_state_events_total',
    help: 'Runner sandbox state events by result (applied, stale).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly reconcileActions = new Counter({
    name: 'paddock_gateway_reconcile_actions_total',
    help: 'Reconciler actions (redrive_create, refresh, redrive_delete, runner_lost, reap_unknown, error).',
    labelNames: ['action'] as const,
    registers: [this.registry],
  });

  constructor(withDefaults = false) {
    if (withDefaults) collectDefaultMetrics({ register: this.registry, prefix: 'paddock_gateway_' });
  }

  /** Gauges read at scrape time from the gateway's in-memory structures. */
  watch(sources: { longPolls: () => number; routeCacheEntries: () => number }): void {
    const gauges: [name: string, help: string, read: () => number][] = [
      ['paddock_gateway_long_polls', '`:wait` long polls parked on this gateway right now.', sources.longPolls],
      ['paddock_gateway_route_cache_entries', 'Entries (live routes and retired ids) in the sandbox route cache.', sources.routeCacheEntries],
    ];
    for (const [name, help, read] of gauges) {
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.set(read());
        },
      });
    }
  }
}

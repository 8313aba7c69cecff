import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/**
 * The process's own registry (never prom-client's global one, so several apps in one test
 * process do not collide). Default metrics keep their standard names: no prefix.
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'paddock_cp_http_requests_total',
    help: 'HTTP requests handled, by method, route template and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'paddock_cp_http_request_duration_seconds',
    help: 'HTTP request duration in seconds, by method and route template.',
    labelNames: ['method', 'route'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly natsMessages = new Counter({
    name: 'paddock_cp_nats_messages_total',
    help: 'NATS messages taken in, by kind and outcome (ok, invalid, unknown_runner, error).',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** Route label: the template (`/v1/clusters/:cluster`), never the raw URL. */
  observeHttp(method: string, route: string | undefined, status: number, seconds: number): void {
    const r = route || '<unmatched>';
    this.httpRequests.inc({ method, route: r, status: String(status) });
    this.httpDuration.observe({ method, route: r }, seconds);
  }
}

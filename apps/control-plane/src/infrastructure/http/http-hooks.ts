import { REQUEST_ID_HEADER, withRequestId } from '@paddock/kit';
import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../../modules/health/metrics';

/**
 * Every response (errors and 404s included) carries x-request-id, and the lines logged while
 * serving a request name it; every request is counted by route template.
 */
export function installHttpHooks(fastify: FastifyInstance, metrics: Metrics): void {
  // Callback-style hooks: neither does I/O, and an async hook costs a promise per request.
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    withRequestId(request.id, done);
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    metrics.observeHttp(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

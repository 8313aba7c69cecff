import { parseJsonBody } from '@paddock/contracts';
import type { FastifyInstance } from 'fastify';

/** Parses JSON bodies: an empty body is no body (curl -X DELETE -H 'content-type: ...'), bad JSON and prototype keys are named. */
export function installJsonBodyParser(fastify: FastifyInstance, bodyLimit: number): void {
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body));
    } catch (e) {
      done(e as Error, undefined); // parseJsonBody throws PaddockErrors only
    }
  });
}

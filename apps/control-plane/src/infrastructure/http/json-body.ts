import { PaddockError, parseJsonBody } from '@paddock/contracts';
import type { FastifyInstance } from 'fastify';

/** Parses JSON bodies: an empty body is no body (curl -X DELETE -H 'content-type: ...'), bad JSON and prototype keys are named. */
export function installJsonBodyParser(fastify: FastifyInstance, bodyLimit: number): void {
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit }, (_req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, parseJsonBody(text));
    } catch (e) {
      done(e instanceof PaddockError ? e : new PaddockError('invalid_argument', 'request body is not valid JSON'), undefined);
    }
  });
}

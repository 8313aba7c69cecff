import { PaddockError } from '@paddock/contracts';
import type { FastifyInstance } from 'fastify';

/**
 * Keys that would let a merged body reach an object's prototype. Fastify's own parser refuses
 * them too, but with "Body is not valid JSON", which sends the user looking for a syntax error
 * in a document that parses fine: ours names the key.
 */
function refusePrototypeKeys(key: string, value: unknown): unknown {
  if (key === '__proto__') {
    throw new PaddockError('invalid_argument', 'request body: the key "__proto__" is not allowed', {
      violations: [{ field: '__proto__', rule: 'forbidden_key', description: 'the key "__proto__" is not allowed anywhere in a request body' }],
    });
  }
  if (key === 'constructor' && typeof value === 'object' && value !== null && Object.hasOwn(value, 'prototype')) {
    throw new PaddockError('invalid_argument', 'request body: the key "constructor.prototype" is not allowed', {
      violations: [
        { field: 'constructor.prototype', rule: 'forbidden_key', description: 'the key "constructor.prototype" is not allowed anywhere in a request body' },
      ],
    });
  }
  return value;
}

/** Parses JSON bodies: an empty body is no body (curl -X DELETE -H 'content-type: ...'), bad JSON names the body. */
export function installJsonBodyParser(fastify: FastifyInstance, bodyLimit: number): void {
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit }, (_req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text, refusePrototypeKeys) as unknown);
    } catch (e) {
      if (e instanceof PaddockError) return done(e, undefined);
      const detail = e instanceof Error ? e.message : String(e);
      done(
        new PaddockError('invalid_argument', `request body is not valid JSON: ${detail}`, {
          violations: [{ field: '(body)', rule: 'json', description: detail }],
        }),
        undefined,
      );
    }
  });
}

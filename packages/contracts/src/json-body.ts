import { PaddockError } from './errors';

/**
 * `JSON.parse` reviver for request bodies: refuses the keys that would let a merged body reach an
 * object's prototype (`__proto__`, `constructor.prototype`), naming the key. Every HTTP surface
 * uses it, so a body that parses fine is never refused as "not valid JSON" (Fastify's wording).
 */
export function refusePrototypeKeys(key: string, value: unknown): unknown {
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

const MAY_HOLD_REFUSED_KEY = /__proto__|constructor|\\u/;

/**
 * Parses a JSON request body with `refusePrototypeKeys`. An empty (or blank) body is no body,
 * `undefined` (curl -X DELETE -H 'content-type: application/json'); syntax errors come back as
 * `invalid_argument` naming the body. Every error it throws is a `PaddockError`.
 */
export function parseJsonBody(body: string | Buffer): unknown {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    // A reviver makes JSON.parse several times slower; only a body that could hold a refused key
    // (its name, or any \u escape, which could spell it) needs one.
    return (MAY_HOLD_REFUSED_KEY.test(text) ? JSON.parse(text, refusePrototypeKeys) : JSON.parse(text)) as unknown;
  } catch (e) {
    if (e instanceof PaddockError) throw e;
    const detail = e instanceof Error ? e.message : String(e);
    throw new PaddockError('invalid_argument', `request body is not valid JSON: ${detail}`, {
      violations: [{ field: '(body)', rule: 'json', description: detail }],
    });
  }
}

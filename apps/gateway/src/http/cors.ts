import type { FastifyInstance } from 'fastify';

/**
 * Cross-origin access for the web console, which the control plane serves from its own origin
 * and which calls this gateway from the page. Only the origins listed in
 * `GATEWAY_CONSOLE_ORIGINS` get CORS headers; every other origin gets none, so the browser keeps
 * refusing it. Credentials (cookies) are never allowed: the console sends its bearer token
 * explicitly, so a listed origin gains nothing it could not do without a token.
 */
const ALLOWED_METHODS = 'GET, POST, PUT, DELETE';
const ALLOWED_HEADERS = 'authorization, content-type, x-request-id';
const EXPOSED_HEADERS = 'x-request-id, content-type, content-length';

/** Reads `scheme://host[:port]` origins (comma-separated); returns the bad entries as errors. */
export function parseConsoleOrigins(value: string): { origins: string[]; bad: string[] } {
  const origins: string[] = [];
  const bad: string[] = [];
  for (const raw of value.split(',').map((s) => s.trim()).filter(Boolean)) {
    let url: URL | undefined;
    try {
      url = new URL(raw);
    } catch {
      url = undefined;
    }
    // An origin is scheme + host + port only: a path, query or credentials mean a typo.
    const isOrigin = url && (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === raw.replace(/\/$/, '');
    if (isOrigin && url) origins.push(url.origin);
    else bad.push(raw);
  }
  return { origins, bad };
}

export function installConsoleCors(fastify: FastifyInstance, origins: readonly string[]): void {
  if (origins.length === 0) return;
  const allowed = new Set(origins);
  fastify.addHook('onRequest', (req, reply, done) => {
    const origin = req.headers.origin;
    // Responses differ by Origin: caches must keep them apart.
    void reply.header('vary', 'origin');
    if (typeof origin !== 'string' || !allowed.has(origin)) {
      done();
      return;
    }
    void reply.header('access-control-allow-origin', origin);
    void reply.header('access-control-expose-headers', EXPOSED_HEADERS);
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
      // A preflight is answered here, before routing: no route needs an OPTIONS handler.
      void reply
        .header('access-control-allow-methods', ALLOWED_METHODS)
        .header('access-control-allow-headers', ALLOWED_HEADERS)
        .header('access-control-max-age', '600')
        .code(204)
        .send();
      return;
    }
    done();
  });
}

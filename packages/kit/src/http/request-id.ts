import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { RequestIdSchema } from '@paddock/contracts';

/** The header a request id travels in, both ways. */
export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * Keeps a well-formed client `x-request-id` (so a caller can trace its call across hops);
 * anything else gets a fresh UUID rather than an error, because tracing must never refuse a request.
 */
export function requestIdFor(req: { headers: IncomingHttpHeaders }): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && RequestIdSchema.safeParse(given).success ? given : randomUUID();
}

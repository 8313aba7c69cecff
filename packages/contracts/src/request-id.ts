import { z } from 'zod';

/**
 * The id of one client request, joining the log lines of every process that works for it (the
 * gateway assigns it or keeps the client's `x-request-id`; the runner logs it with its own lines).
 * A header-safe token, so a client-chosen id can be echoed and logged as it came.
 */
export const RequestIdSchema = z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, 'a request id is 1-128 chars of [A-Za-z0-9._:-]');
export type RequestId = z.infer<typeof RequestIdSchema>;

import { z } from 'zod';
import { RequestIdSchema } from './request-id';
import { SandboxSchema } from './sandbox';

/**
 * Pause and resume (gateway → runner). Pausing freezes every process of the sandbox where the
 * backend can (they keep their memory and continue where they stopped on resume); paused time
 * does not count against the lifetime, and a paused sandbox's CPU request goes back to the
 * runner's free capacity. Both are idempotent: pausing a paused sandbox (or resuming a running
 * one) returns it unchanged. Any exec, file or log call on a paused sandbox resumes it first.
 */
const Ref = {
  trace: z.object({ requestId: RequestIdSchema }).optional(),
  sandboxId: z.string().min(1),
  organizationId: z.string().min(1),
};

export const PauseSandboxRequestSchema = z.object(Ref);
export type PauseSandboxRequest = z.infer<typeof PauseSandboxRequestSchema>;
export const ResumeSandboxRequestSchema = z.object(Ref);
export type ResumeSandboxRequest = z.infer<typeof ResumeSandboxRequestSchema>;
/** The sandbox in STATE_PAUSED (pause) or STATE_RUNNING (resume). */
export const PauseSandboxResponseSchema = z.object({ sandbox: SandboxSchema });
export type PauseSandboxResponse = z.infer<typeof PauseSandboxResponseSchema>;

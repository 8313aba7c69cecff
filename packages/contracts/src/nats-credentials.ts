import { z } from 'zod';
import { ApiErrorBodySchema } from './errors';
import { NATS_ROLES } from './nats-permissions';

/**
 * NATS credentials the control plane issues: a runner's (asked for by its cluster's controller
 * over `subjects.runnerCredentialsRequest(clusterId)`), or a controller's (asked for by an admin
 * over HTTP, `POST /v1/clusters/{cluster}/natsCredentials`). `creds` is the `.creds` file's
 * content, a secret: write it to a file only its process can read.
 */
export const IssuedNatsCredentialsSchema = z.strictObject({
  role: z.enum(NATS_ROLES),
  /** The user's name: runner id or cluster id (the subjects its permissions are scoped by). */
  userName: z.string().min(1),
  creds: z.string().min(1),
  /** RFC 3339; null = never expires. */
  expiresAt: z.string().nullable(),
});
export type IssuedNatsCredentials = z.infer<typeof IssuedNatsCredentialsSchema>;

export const RunnerCredentialsRequestSchema = z.strictObject({ runnerId: z.string().min(1) });
export type RunnerCredentialsRequest = z.infer<typeof RunnerCredentialsRequestSchema>;

export const RunnerCredentialsReplySchema = z.union([
  z.strictObject({ ok: z.literal(true), credentials: IssuedNatsCredentialsSchema }),
  z.strictObject({ ok: z.literal(false), error: ApiErrorBodySchema }),
]);
export type RunnerCredentialsReply = z.infer<typeof RunnerCredentialsReplySchema>;

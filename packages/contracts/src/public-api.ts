import { z } from 'zod';
import { RoleSchema } from './enums';
import { FieldViolationSchema } from './errors';
import { ListDirResponseSchema, type FileStatWire } from './runner-rpc';
import { SandboxStatusSchema } from './sandbox';

/**
 * REST shapes of the public APIs that browser and SDK clients read and that had no schema of their
 * own yet: identity and tokens (control plane), the sandbox resource as the gateway returns it,
 * `:explain`, listings, directory entries and log lines (gateway). The web console parses what it
 * receives with these, so a drift between an app and its clients fails loudly in one place.
 * Objects are open (unknown keys are kept out, not refused): the APIs may add fields.
 */

export const OrganizationViewSchema = z.object({ id: z.string(), name: z.string(), createTime: z.string() });
export type OrganizationView = z.infer<typeof OrganizationViewSchema>;

/** `GET /v1/auth/whoami`. */
export const WhoAmIResponseSchema = z.object({
  organization: OrganizationViewSchema,
  role: RoleSchema,
  token: z.object({ id: z.string(), name: z.string() }),
  operator: z.boolean(),
});
export type WhoAmIResponse = z.infer<typeof WhoAmIResponseSchema>;

/** An API token as listed (`GET /v1/tokens`): never its secret. */
export const ApiTokenViewSchema = z.object({
  id: z.string(),
  organizationId: z.string(),
  name: z.string(),
  role: RoleSchema,
  tokenPrefix: z.string(),
  createTime: z.string(),
  revokeTime: z.string().nullable(),
  lastUseTime: z.string().nullable(),
});
export type ApiTokenView = z.infer<typeof ApiTokenViewSchema>;

/** `POST /v1/tokens`: the only response that carries the secret. */
export const IssuedTokenSchema = ApiTokenViewSchema.extend({ token: z.string() });
export type IssuedToken = z.infer<typeof IssuedTokenSchema>;

export const ListApiTokensResponseSchema = z.object({ tokens: z.array(ApiTokenViewSchema) });
export type ListApiTokensResponse = z.infer<typeof ListApiTokensResponseSchema>;

/** `POST /v1/tokens` body. */
export const CreateApiTokenRequestSchema = z.object({ name: z.string(), role: RoleSchema });
export type CreateApiTokenRequest = z.infer<typeof CreateApiTokenRequestSchema>;

/** A runner release (`GET /v1/sandbox/releases`). */
export const RunnerReleaseSchema = z.object({
  revision: z.number().int(),
  channel: z.string(),
  version: z.string(),
  image: z.string(),
  publishTime: z.string(),
});
export type RunnerRelease = z.infer<typeof RunnerReleaseSchema>;
export const ListRunnerReleasesResponseSchema = z.object({ releases: z.array(RunnerReleaseSchema) });

/** One runner's verdict on a spec: admitted, or the violations that refuse it; `null` = its policy is unknown. */
export const PlacementVerdictViewSchema = z.object({
  runnerId: z.string(),
  admitted: z.boolean().nullable(),
  violations: z.array(FieldViolationSchema),
  note: z.string().optional(),
});
export type PlacementVerdictView = z.infer<typeof PlacementVerdictViewSchema>;

/** The placement decision the gateway records with each sandbox. */
export const PlacementRecordSchema = z.object({
  decidedAt: z.string(),
  candidates: z.array(z.string()),
  verdicts: z.array(PlacementVerdictViewSchema),
  attempts: z.array(z.object({ runnerId: z.string(), outcome: z.string(), code: z.string().optional(), message: z.string().optional() })),
  winner: z.string().nullable(),
});
export type PlacementRecordView = z.infer<typeof PlacementRecordSchema>;

/** `POST /v1/sandboxes:explain`: what a create would do, creating nothing. */
export const ExplainPlacementResponseSchema = z.object({
  candidates: z.array(z.string()),
  verdicts: z.array(PlacementVerdictViewSchema),
  order: z.array(z.string()),
  wouldPlaceOn: z.string().nullable(),
});
export type ExplainPlacementResponse = z.infer<typeof ExplainPlacementResponseSchema>;

/** A service's reachability as the sandbox status reports it (absent on runners that expose none). */
export const ServiceStatusViewSchema = z.object({
  port: z.number().int(),
  name: z.string().optional(),
  protocol: z.string().optional(),
  visibility: z.string().optional(),
  url: z.string().optional(),
  endpoint: z.object({ kind: z.string().optional(), auth: z.string().optional(), url: z.string().optional() }).optional(),
});

/** The `Sandbox` resource as the gateway returns it: the accepted spec, and its status with the placement. */
export const GatewaySandboxSchema = z.object({
  sandboxId: z.string(),
  spec: z.record(z.string(), z.unknown()),
  status: SandboxStatusSchema.extend({
    // The gateway also records reasons of its own (e.g. why a placement failed).
    stateReason: z.string().optional(),
    placement: PlacementRecordSchema,
    resourceUsage: z.object({ cpuMillicores: z.number(), memoryMb: z.number(), gpuCount: z.number() }).partial().optional(),
    services: z.array(ServiceStatusViewSchema).optional(),
  }),
});
export type GatewaySandbox = z.infer<typeof GatewaySandboxSchema>;

export const GatewayListSandboxesResponseSchema = z.object({ sandboxes: z.array(GatewaySandboxSchema), nextPageToken: z.string() });
export type GatewayListSandboxesResponse = z.infer<typeof GatewayListSandboxesResponseSchema>;

/** `DELETE /v1/sandboxes/{id}`. */
export const GatewayDeleteSandboxResponseSchema = z.object({ sandbox: GatewaySandboxSchema.optional() });

/** `GET /v1/sandboxes/{id}:listDir`: the runner's file stats, relayed as they are. */
export const GatewayListDirResponseSchema = ListDirResponseSchema;
export type DirEntry = FileStatWire;

/** One NDJSON line of `GET /v1/sandboxes/{id}/logs`: output (base64) at a byte offset, or a last error line. */
export const LogLineSchema = z.union([
  z.object({ offset: z.number().int(), stream: z.enum(['stdout', 'stderr']), data: z.string(), time: z.string() }),
  z.object({ error: z.object({ code: z.string(), message: z.string() }).catchall(z.unknown()) }),
]);
export type LogLine = z.infer<typeof LogLineSchema>;

/**
 * The exec WebSocket (`/v1/sandboxes/{id}/exec/stream`): subprotocols. A browser cannot set an
 * Authorization header on a WebSocket, so it offers `EXEC_STREAM_PROTOCOL` plus one
 * `EXEC_BEARER_PROTOCOL_PREFIX + token` entry; the gateway selects `EXEC_STREAM_PROTOCOL` (never
 * the bearer entry) and authenticates with the token.
 */
export const EXEC_STREAM_PROTOCOL = 'paddock.exec.v1';
export const EXEC_BEARER_PROTOCOL_PREFIX = 'paddock.bearer.';

/** Text frames the gateway sends on the exec WebSocket (output comes as binary frames: channel byte + bytes). */
export const ExecServerMessageSchema = z.union([
  z.object({ type: z.literal('ready'), time: z.string().optional() }),
  z.object({ type: z.literal('exit'), exitCode: z.number().int(), timedOut: z.boolean().optional(), signal: z.string().optional() }),
  z.object({ type: z.literal('error'), code: z.string(), message: z.string() }).catchall(z.unknown()),
]);
export type ExecServerMessage = z.infer<typeof ExecServerMessageSchema>;

import { z } from 'zod';
import { ApiErrorBodySchema } from './errors';

/**
 * An organization's secret stores (`/v1/settings/secretStores`) and how their values reach a
 * sandbox. A value is written once and never read back through any API: reads return the
 * store and the paths (names) of its secrets, never their contents.
 */

/** Store names and secret paths are used as identifiers: short, printable, no separators that need escaping. */
export const SECRET_STORE_NAME_PATTERN = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
export const SECRET_PATH_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.\-/]{0,254}$/;
/** Largest value one secret holds (bytes of UTF-8). */
export const MAX_SECRET_VALUE_BYTES = 64 * 1024;
/** Most secrets one store holds. */
export const MAX_SECRETS_PER_STORE = 500;

/** `PADDOCK`: values held (encrypted) by the control plane. `WANDB`: a team's W&B secrets (not served by this installation). */
export const SecretStoreProviderTypeSchema = z.enum(['SECRET_STORE_PROVIDER_TYPE_PADDOCK', 'SECRET_STORE_PROVIDER_TYPE_WANDB']);
export type SecretStoreProviderType = z.infer<typeof SecretStoreProviderTypeSchema>;

const SecretValueSchema = z
  .string()
  .min(1, 'must not be empty')
  .refine((v) => Buffer.byteLength(v, 'utf8') <= MAX_SECRET_VALUE_BYTES, `must be at most ${MAX_SECRET_VALUE_BYTES} bytes`);

/** One secret as written: its path in the store and its value (a string, or a JSON object whose fields a mapping's `field` picks). */
export const SecretWriteSchema = z.strictObject({
  path: z.string().regex(SECRET_PATH_PATTERN, 'must be 1-255 chars of [A-Za-z0-9_.-/], not starting with . - or /'),
  value: SecretValueSchema,
});
export type SecretWrite = z.infer<typeof SecretWriteSchema>;

/** One secret as read: its path and times, never its value. */
export const SecretMetadataSchema = z.object({ path: z.string(), createTime: z.string(), updateTime: z.string() });
export type SecretMetadata = z.infer<typeof SecretMetadataSchema>;

export const SecretStoreSchema = z.object({
  name: z.string(),
  providerType: SecretStoreProviderTypeSchema,
  secrets: z.array(SecretMetadataSchema),
  createTime: z.string(),
  updateTime: z.string(),
});
export type SecretStore = z.infer<typeof SecretStoreSchema>;

const uniquePaths = (secrets: { path: string }[] | undefined, ctx: z.RefinementCtx, field: string): void => {
  const seen = new Set<string>();
  (secrets ?? []).forEach((s, i) => {
    if (seen.has(s.path)) ctx.addIssue({ code: 'custom', path: [field, i, 'path'], message: `duplicate path ${JSON.stringify(s.path)}` });
    seen.add(s.path);
  });
};

export const CreateSecretStoreRequestSchema = z.strictObject({
  secretStore: z
    .strictObject({
      name: z.string().regex(SECRET_STORE_NAME_PATTERN, 'must be a DNS label: 1-63 chars of [a-z0-9-], starting and ending alphanumeric'),
      providerType: z.literal('SECRET_STORE_PROVIDER_TYPE_PADDOCK', { message: 'only SECRET_STORE_PROVIDER_TYPE_PADDOCK can be created here' }).default('SECRET_STORE_PROVIDER_TYPE_PADDOCK'),
      secrets: z.array(SecretWriteSchema).max(MAX_SECRETS_PER_STORE).optional(),
    })
    .superRefine((s, ctx) => uniquePaths(s.secrets, ctx, 'secrets')),
});
export type CreateSecretStoreRequest = z.infer<typeof CreateSecretStoreRequestSchema>;

/**
 * PATCH: `secrets` are written (added or replaced by path), `removeSecrets` are deleted. A path
 * may not be in both.
 */
export const UpdateSecretStoreRequestSchema = z
  .strictObject({
    secretStore: z.strictObject({ secrets: z.array(SecretWriteSchema).max(MAX_SECRETS_PER_STORE).optional() }).superRefine((s, ctx) => uniquePaths(s.secrets, ctx, 'secrets')),
    removeSecrets: z.array(z.string().min(1)).max(MAX_SECRETS_PER_STORE).optional(),
  })
  .superRefine((r, ctx) => {
    const written = new Set((r.secretStore.secrets ?? []).map((s) => s.path));
    (r.removeSecrets ?? []).forEach((p, i) => {
      if (written.has(p)) ctx.addIssue({ code: 'custom', path: ['removeSecrets', i], message: `path ${JSON.stringify(p)} is also written in secretStore.secrets` });
    });
  });
export type UpdateSecretStoreRequest = z.infer<typeof UpdateSecretStoreRequestSchema>;

export const ListSecretStoresResponseSchema = z.object({ secretStores: z.array(SecretStoreSchema) });
export type ListSecretStoresResponse = z.infer<typeof ListSecretStoresResponseSchema>;

// ---------------------------------------------------------------------------------------------
// What a sandbox spec says (a container's `secretStores`), and how the gateway resolves it
// ---------------------------------------------------------------------------------------------

/** `path` names the secret in the store; `field` picks one field of a JSON-object value; `envVar` defaults to the path (empty = unset). */
export const SecretMappingSchema = z.strictObject({
  path: z.string().min(1, 'must name a secret in the store'),
  field: z.string().optional(),
  // Empty = unset, as the protobuf form of the request sends it.
  envVar: z
    .string()
    .regex(/^([A-Za-z_][A-Za-z0-9_]*)?$/, 'must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)')
    .optional(),
});
export type SecretMapping = z.infer<typeof SecretMappingSchema>;

export const SecretStoreReferenceSchema = z.strictObject({
  storeName: z.string().min(1, 'must name a secret store'),
  secrets: z.array(SecretMappingSchema).min(1, 'must map at least one secret'),
});
export type SecretStoreReference = z.infer<typeof SecretStoreReferenceSchema>;

/**
 * A container's `imagePullCredentials`: the secret at `credentials.path` (or its `field`) must be a
 * JSON object with non-empty `username` and `password`; the runner receives Docker config JSON.
 */
export const ImagePullCredentialsSchema = z.strictObject({
  registry: z.string().regex(/^[A-Za-z0-9.-]+(:[0-9]{1,5})?$/, 'must be a registry authority, e.g. ghcr.io or registry.local:5000'),
  credentials: z.strictObject({
    storeName: z.string().min(1, 'must name a secret store'),
    path: z.string().min(1, 'must name a secret in the store'),
    field: z.string().optional(),
  }),
});
export type ImagePullCredentials = z.infer<typeof ImagePullCredentialsSchema>;

/**
 * Gateway → control plane (NATS request/reply on `subjects.secretsResolve()`): the values one
 * create needs, for the organization that creates the sandbox. `field` paths in errors are the
 * spec's (`containers[0].secretStores[1].secrets[0].path`).
 */
export const ResolveSecretsRequestSchema = z.strictObject({
  organizationId: z.string().min(1),
  containers: z.array(
    z.strictObject({
      /** The container's index in `spec.containers`, and its field path for errors. */
      index: z.number().int().min(0),
      at: z.string().min(1),
      secretStores: z.array(SecretStoreReferenceSchema),
    }),
  ),
  /** Every container's and init container's pull credentials, with their field paths. */
  pullCredentials: z.array(z.strictObject({ at: z.string().min(1), credentials: ImagePullCredentialsSchema })).optional(),
});
export type ResolveSecretsRequest = z.infer<typeof ResolveSecretsRequestSchema>;

/** Environment variables, per container index, holding resolved secret values. */
export const ResolvedSecretEnvSchema = z.array(z.strictObject({ index: z.number().int().min(0), env: z.record(z.string(), z.string()) }));
export type ResolvedSecretEnv = z.infer<typeof ResolvedSecretEnvSchema>;

export const ResolveSecretsReplySchema = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    containers: ResolvedSecretEnvSchema,
    /** Docker config JSON (`{"auths": {...}}`) for the pull credentials, when there were any. */
    dockerConfigJson: z.string().optional(),
  }),
  z.object({ ok: z.literal(false), error: ApiErrorBodySchema }),
]);
export type ResolveSecretsReply = z.infer<typeof ResolveSecretsReplySchema>;

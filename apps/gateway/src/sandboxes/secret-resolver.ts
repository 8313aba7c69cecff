import type { NatsConnection } from '@nats-io/transport-node';
import {
  PaddockError,
  ImagePullCredentialsSchema,
  ResolveSecretsReplySchema,
  SecretStoreReferenceSchema,
  type CreateSandboxRequest,
  subjects,
  type FieldViolation,
  type ResolveSecretsRequest,
  type SandboxSpec,
} from '@paddock/contracts';

/**
 * Resolves a create's `secretStores` mappings to values by asking the control plane (which alone
 * holds the key the values are sealed under) over NATS. The values travel on to the runner in
 * the create request and are never written to the gateway's database, logs or responses.
 */
export class SecretResolver {
  constructor(
    private readonly nc: NatsConnection,
    private readonly timeoutMs: number,
  ) {}

  /** Empty when the spec maps no secret; throws `invalid_argument` / `failed_precondition` naming the field. */
  async resolve(organizationId: string, spec: SandboxSpec): Promise<ResolvedSecrets> {
    const req = requestOf(organizationId, spec);
    if (!req) return {};
    let raw: unknown;
    try {
      raw = (await this.nc.request(subjects.secretsResolve(), JSON.stringify(req), { timeout: this.timeoutMs })).json();
    } catch (e) {
      throw new PaddockError('unavailable', `the control plane did not answer the secret lookup: ${e instanceof Error ? e.message : String(e)}`);
    }
    const reply = ResolveSecretsReplySchema.safeParse(raw);
    if (!reply.success) throw new PaddockError('internal', 'the control plane answered the secret lookup with a malformed reply');
    if (!reply.data.ok) throw PaddockError.fromBody(reply.data.error);
    const { containers, dockerConfigJson } = reply.data;
    return {
      ...(req.containers.length ? { secretEnv: containers } : {}),
      ...(dockerConfigJson ? { imagePullDockerConfig: dockerConfigJson } : {}),
    };
  }
}

/** What a create request carries beside the spec: resolved secret values, never stored. */
export type ResolvedSecrets = Pick<CreateSandboxRequest, 'secretEnv' | 'imagePullDockerConfig'>;

/** The lookup for a spec's mappings, or undefined when it has none; malformed mappings are refused by field. */
export function requestOf(organizationId: string, spec: SandboxSpec): ResolveSecretsRequest | undefined {
  const violations: FieldViolation[] = [];
  const containers: ResolveSecretsRequest['containers'] = [];
  for (const [i, c] of spec.containers.entries()) {
    const at = `containers[${i}]`;
    const refs = [];
    for (const [j, raw] of (c.secretStores ?? []).entries()) {
      const r = SecretStoreReferenceSchema.safeParse(raw);
      if (r.success) refs.push(r.data);
      else for (const issue of r.error.issues) violations.push({ field: [`${at}.secretStores[${j}]`, ...issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))].join(''), rule: 'secret_store_reference', description: issue.message });
    }
    if (refs.length) containers.push({ index: i, at, secretStores: refs });
  }
  for (const [i, c] of (spec.initContainers ?? []).entries()) {
    if (c.secretStores?.length) violations.push({ field: `initContainers[${i}].secretStores`, rule: 'unsupported', description: 'secrets are delivered to containers only, not to init containers' });
  }
  const pullCredentials: NonNullable<ResolveSecretsRequest['pullCredentials']> = [];
  const all = [...spec.containers.map((c, i) => ({ c, at: `containers[${i}]` })), ...(spec.initContainers ?? []).map((c, i) => ({ c, at: `initContainers[${i}]` }))];
  for (const { c, at } of all) {
    if (c.imagePullCredentials === undefined) continue;
    const r = ImagePullCredentialsSchema.safeParse(c.imagePullCredentials);
    if (r.success) pullCredentials.push({ at, credentials: r.data });
    else for (const issue of r.error.issues) violations.push({ field: [`${at}.imagePullCredentials`, ...issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))].join(''), rule: 'image_pull_credentials', description: issue.message });
  }
  if (violations.length) {
    throw new PaddockError('invalid_argument', violations.map((v) => `${v.field}: ${v.description}`).join('; '), { reason: 'CWSANDBOX_INVALID_REQUEST', violations });
  }
  if (!containers.length && !pullCredentials.length) return undefined;
  return { organizationId, containers, ...(pullCredentials.length ? { pullCredentials } : {}) };
}

/** With no resolver (a gateway built without NATS access to the control plane), a spec that maps secrets is refused by field. */
export async function resolveSecrets(resolver: SecretResolver | undefined, organizationId: string, spec: SandboxSpec): Promise<ResolvedSecrets> {
  if (resolver) return resolver.resolve(organizationId, spec);
  const req = requestOf(organizationId, spec);
  if (!req) return {};
  throw new PaddockError('failed_precondition', 'this gateway cannot resolve secrets', {
    reason: 'CWSANDBOX_SECRET_STORE_NOT_PROVISIONED',
    violations: req.containers.map((c) => ({ field: `${c.at}.secretStores`, rule: 'provisioned', description: 'the gateway has no secret resolver' })),
  });
}

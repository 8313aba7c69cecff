import { ImagePullCredentialsSchema, PaddockError, SecretStoreReferenceSchema, type ResolvedSecretEnv, type SandboxSpec } from '@paddock/contracts';

/**
 * A container's `secretStores` mappings name environment variables whose values the gateway
 * resolves at create time and sends beside the spec (`secretEnv` of the create request). The
 * runner hands those values to the launch and keeps them nowhere else: the persisted metadata
 * and the request fingerprint hold the mappings only.
 */

/** The env var names a container's mappings ask for (a mapping's `envVar`, else its `path`), in order. */
export function secretEnvNamesOf(container: SandboxSpec['containers'][number] | undefined): string[] {
  const names: string[] = [];
  for (const raw of container?.secretStores ?? []) {
    const ref = SecretStoreReferenceSchema.safeParse(raw);
    if (!ref.success) continue;
    for (const m of ref.data.secrets) names.push(m.envVar || m.path);
  }
  return names;
}

/**
 * Checks that only the primary container (at `index`) maps secrets, and that the delivered values
 * cover exactly its mappings (a missing one would start a workload without its credential; an
 * extra one is a value nobody asked for); returns them.
 */
export function deliveredSecretEnv(spec: SandboxSpec, delivered: ResolvedSecretEnv | undefined, index: number): Record<string, string> {
  // Both backends put the values in the primary container's env only: a sidecar's mapping would
  // otherwise be accepted and its variables never set.
  const sidecars = spec.containers.flatMap((c, i) => (i !== index && c.secretStores?.length ? [i] : []));
  if (sidecars.length) {
    throw new PaddockError('invalid_argument', `secrets are delivered to the primary container only: ${sidecars.map((i) => `containers[${i}].secretStores`).join(', ')}`, {
      violations: sidecars.map((i) => ({ field: `containers[${i}].secretStores`, rule: 'runner_capability', description: "secrets are delivered to the sandbox's primary container only" })),
    });
  }
  const byIndex = new Map((delivered ?? []).map((d) => [d.index, d.env]));
  for (const [i, c] of spec.containers.entries()) {
    const want = secretEnvNamesOf(c).sort();
    const got = Object.keys(byIndex.get(i) ?? {}).sort();
    if (want.join('\u0000') !== got.join('\u0000')) {
      throw new PaddockError('invalid_argument', `the create's secretEnv does not match containers[${i}].secretStores (asked for ${want.length}, delivered ${got.length})`, {
        violations: [{ field: `containers[${i}].secretStores`, rule: 'delivered', description: 'every mapped env var, and only those, must be delivered with the create' }],
      });
    }
  }
  for (const d of delivered ?? []) {
    if (d.index >= spec.containers.length) {
      throw new PaddockError('invalid_argument', `the create's secretEnv names container ${d.index}, which the spec does not have`, {
        violations: [{ field: 'secretEnv', rule: 'container_index', description: `the spec has ${spec.containers.length} containers` }],
      });
    }
  }
  return byIndex.get(index) ?? {};
}

/** Refuses mappings whose shape is not a SecretStoreReference, naming the field. */
export function checkSecretStoreShapes(spec: SandboxSpec): void {
  // Values are delivered to containers only; an init container's mapping would otherwise be dropped.
  for (const [i, c] of (spec.initContainers ?? []).entries()) {
    if (c.secretStores?.length) {
      throw new PaddockError('invalid_argument', `initContainers[${i}].secretStores: secrets are delivered to containers only, not to init containers`, {
        violations: [{ field: `initContainers[${i}].secretStores`, rule: 'unsupported', description: 'secrets are delivered to containers only, not to init containers' }],
      });
    }
  }
  for (const [i, c] of spec.containers.entries()) {
    for (const [j, raw] of (c.secretStores ?? []).entries()) {
      const r = SecretStoreReferenceSchema.safeParse(raw);
      if (!r.success) {
        const issue = r.error.issues[0];
        const sub = issue?.path.length ? `.${issue.path.map(String).join('.')}` : '';
        throw new PaddockError('invalid_argument', `containers[${i}].secretStores[${j}]${sub}: ${issue?.message ?? 'invalid'}`, {
          violations: [{ field: `containers[${i}].secretStores[${j}]${sub}`, rule: 'secret_store_reference', description: issue?.message ?? 'invalid' }],
        });
      }
    }
  }
}

/** The registries the spec's containers and init containers name pull credentials for, sorted, unique. */
export function imagePullRegistriesOf(spec: SandboxSpec): string[] {
  const out = new Set<string>();
  for (const c of [...spec.containers, ...(spec.initContainers ?? [])]) {
    const r = ImagePullCredentialsSchema.safeParse(c.imagePullCredentials);
    if (r.success) out.add(r.data.registry);
  }
  return [...out].sort();
}

/** Refuses malformed pull credentials by field, and a create that asks for some without their resolved config. */
export function checkImagePullCredentials(spec: SandboxSpec, dockerConfig: string | undefined): void {
  const all = [...spec.containers.map((c, i) => ({ c, at: `containers[${i}]` })), ...(spec.initContainers ?? []).map((c, i) => ({ c, at: `initContainers[${i}]` }))];
  for (const { c, at } of all) {
    if (c.imagePullCredentials === undefined) continue;
    const r = ImagePullCredentialsSchema.safeParse(c.imagePullCredentials);
    if (!r.success) {
      const issue = r.error.issues[0];
      const field = `${at}.imagePullCredentials${issue?.path.length ? `.${issue.path.map(String).join('.')}` : ''}`;
      throw new PaddockError('invalid_argument', `${field}: ${issue?.message ?? 'invalid'}`, { violations: [{ field, rule: 'image_pull_credentials', description: issue?.message ?? 'invalid' }] });
    }
    if (!dockerConfig) {
      throw new PaddockError('invalid_argument', `${at}.imagePullCredentials was not resolved with the create`, {
        violations: [{ field: `${at}.imagePullCredentials`, rule: 'delivered', description: 'the resolved Docker config must be delivered with the create' }],
      });
    }
  }
}

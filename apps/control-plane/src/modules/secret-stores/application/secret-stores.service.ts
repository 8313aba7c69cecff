import { Injectable } from '@nestjs/common';
import {
  PaddockError,
  type CreateSecretStoreRequest,
  type FieldViolation,
  type ResolvedSecretEnv,
  type ResolveSecretsRequest,
  type SecretStore,
  type UpdateSecretStoreRequest,
  MAX_SECRETS_PER_STORE,
} from '@paddock/contracts';
import { AppConfig } from '../../../config/app-config';
import { Clock, IdGenerator } from '../../../infrastructure/tokens';
import { SecretStoresRepository, type SecretMetadataRow, type SecretStoreRow } from '../infrastructure/secret-stores.repository';
import { SecretCipher } from './secret-cipher';

const notFound = (name: string): PaddockError => new PaddockError('not_found', `secret store "${name}" not found`);

function toSecretStore(row: SecretStoreRow, secrets: SecretMetadataRow[]): SecretStore {
  return {
    name: row.name,
    providerType: row.provider_type as SecretStore['providerType'],
    secrets: secrets.filter((s) => s.store_id === row.id).map((s) => ({ path: s.path, createTime: s.created_at.toISOString(), updateTime: s.updated_at.toISOString() })),
    createTime: row.created_at.toISOString(),
    updateTime: row.updated_at.toISOString(),
  };
}

/**
 * An organization's secret stores. Values go in sealed and come out only through `resolve`
 * (the gateway's NATS request at sandbox create); every other read returns paths and times.
 */
@Injectable()
export class SecretStoresService {
  private readonly cipher: SecretCipher | undefined;

  constructor(
    private readonly repo: SecretStoresRepository,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    config: AppConfig,
  ) {
    this.cipher = config.secretsKey ? SecretCipher.fromBase64(config.secretsKey) : undefined;
  }

  async create(organizationId: string, req: CreateSecretStoreRequest): Promise<SecretStore> {
    const { name, providerType, secrets = [] } = req.secretStore;
    const cipher = secrets.length ? this.requireCipher() : undefined;
    const id = this.ids.uuid();
    const sealed = secrets.map((s) => ({ path: s.path, sealed: (cipher as SecretCipher).seal(s.value, id, s.path) }));
    const row = await this.repo.insert({ id, organizationId, name, providerType, at: this.clock.now() }, sealed);
    if (!row) {
      throw new PaddockError('already_exists', `secret store "${name}" already exists`, {
        violations: [{ field: 'secretStore.name', rule: 'unique', description: `the organization already has a secret store named "${name}"` }],
      });
    }
    return toSecretStore(row, await this.repo.secretMetadata([row.id]));
  }

  async list(organizationId: string): Promise<SecretStore[]> {
    const rows = await this.repo.list(organizationId);
    const secrets = await this.repo.secretMetadata(rows.map((r) => r.id));
    return rows.map((r) => toSecretStore(r, secrets));
  }

  async get(organizationId: string, name: string): Promise<SecretStore> {
    const row = await this.repo.findByName(organizationId, name);
    if (!row) throw notFound(name);
    return toSecretStore(row, await this.repo.secretMetadata([row.id]));
  }

  async update(organizationId: string, name: string, req: UpdateSecretStoreRequest): Promise<SecretStore> {
    const row = await this.repo.findByName(organizationId, name);
    if (!row) throw notFound(name);
    const writes = req.secretStore.secrets ?? [];
    const paths = new Set((await this.repo.secretMetadata([row.id])).map((s) => s.path));
    for (const p of req.removeSecrets ?? []) paths.delete(p);
    for (const w of writes) paths.add(w.path);
    if (paths.size > MAX_SECRETS_PER_STORE) {
      throw new PaddockError('invalid_argument', `secret store "${name}" would hold ${paths.size} secrets; at most ${MAX_SECRETS_PER_STORE}`, {
        violations: [{ field: 'secretStore.secrets', rule: 'max_items', description: `a store holds at most ${MAX_SECRETS_PER_STORE} secrets` }],
      });
    }
    const cipher = writes.length ? this.requireCipher() : undefined;
    const sealed = writes.map((s) => ({ path: s.path, sealed: (cipher as SecretCipher).seal(s.value, row.id, s.path) }));
    await this.repo.update(row.id, sealed, req.removeSecrets ?? [], this.clock.now());
    return this.get(organizationId, name);
  }

  /** `allowMissing`: deleting a store that does not exist succeeds instead of `not_found`. */
  async delete(organizationId: string, name: string, allowMissing: boolean): Promise<void> {
    const deleted = await this.repo.delete(organizationId, name);
    if (!deleted && !allowMissing) throw notFound(name);
  }

  /**
   * The env vars holding the values a create's mappings name, per container. Every mapping that
   * cannot be served is named in one `failed_precondition` with reason
   * `CWSANDBOX_SECRET_STORE_NOT_PROVISIONED`; nothing is returned unless all resolve.
   */
  async resolve(req: ResolveSecretsRequest): Promise<{ containers: ResolvedSecretEnv; dockerConfigJson?: string }> {
    const violations: FieldViolation[] = [];
    const out: ResolvedSecretEnv = [];
    for (const c of req.containers) {
      const env: Record<string, string> = {};
      for (const [si, ref] of c.secretStores.entries()) {
        const at = `${c.at}.secretStores[${si}]`;
        const store = await this.repo.findByName(req.organizationId, ref.storeName);
        if (!store || store.provider_type !== 'SECRET_STORE_PROVIDER_TYPE_PADDOCK') {
          violations.push({ field: `${at}.storeName`, rule: 'provisioned', description: `the organization has no secret store "${ref.storeName}" this installation serves` });
          continue;
        }
        const cipher = this.cipher;
        if (!cipher) {
          violations.push({ field: `${at}.storeName`, rule: 'provisioned', description: 'the control plane has no PADDOCK_SECRETS_KEY, so it holds no secret values' });
          continue;
        }
        const sealed = new Map((await this.repo.sealedValues(store.id, ref.secrets.map((m) => m.path))).map((r) => [r.path, r.sealed]));
        for (const [mi, m] of ref.secrets.entries()) {
          const mat = `${at}.secrets[${mi}]`;
          const s = sealed.get(m.path);
          if (s === undefined) {
            violations.push({ field: `${mat}.path`, rule: 'provisioned', description: `secret store "${ref.storeName}" has no secret "${m.path}"` });
            continue;
          }
          const value = pickField(cipher.open(s, store.id, m.path), m.field);
          if (value === undefined) {
            violations.push({ field: `${mat}.field`, rule: 'provisioned', description: `secret "${m.path}" is not a JSON object with a string field "${m.field ?? ''}"` });
            continue;
          }
          const envVar = m.envVar || m.path;
          if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(envVar)) {
            violations.push({ field: `${mat}.envVar`, rule: 'pattern', description: `secret path "${m.path}" is not an environment variable name; set envVar` });
            continue;
          }
          env[envVar] = value;
        }
      }
      out.push({ index: c.index, env });
    }
    const auths: Record<string, { username: string; password: string; auth: string }> = {};
    for (const p of req.pullCredentials ?? []) {
      const { registry, credentials: src } = p.credentials;
      const at = `${p.at}.imagePullCredentials.credentials`;
      const store = await this.repo.findByName(req.organizationId, src.storeName);
      if (!store || store.provider_type !== 'SECRET_STORE_PROVIDER_TYPE_PADDOCK' || !this.cipher) {
        violations.push({ field: `${at}.storeName`, rule: 'provisioned', description: `the organization has no secret store "${src.storeName}" this installation serves` });
        continue;
      }
      const [row] = await this.repo.sealedValues(store.id, [src.path]);
      if (!row) {
        violations.push({ field: `${at}.path`, rule: 'provisioned', description: `secret store "${src.storeName}" has no secret "${src.path}"` });
        continue;
      }
      const login = registryLogin(this.cipher.open(row.sealed, store.id, src.path), src.field);
      if (!login) {
        violations.push({ field: `${at}${src.field ? '.field' : '.path'}`, rule: 'username_password', description: 'must resolve to a JSON object with non-empty "username" and "password"' });
        continue;
      }
      auths[registry] = { ...login, auth: Buffer.from(`${login.username}:${login.password}`).toString('base64') };
    }
    if (violations.length) {
      throw new PaddockError('failed_precondition', `secret stores not provisioned: ${violations.map((v) => v.field).join(', ')}`, {
        reason: 'CWSANDBOX_SECRET_STORE_NOT_PROVISIONED',
        violations,
      });
    }
    return Object.keys(auths).length ? { containers: out, dockerConfigJson: JSON.stringify({ auths }) } : { containers: out };
  }

  private requireCipher(): SecretCipher {
    if (!this.cipher) {
      throw new PaddockError('failed_precondition', 'this control plane has no PADDOCK_SECRETS_KEY, so it cannot store secret values', {
        violations: [{ field: 'secretStore.secrets', rule: 'secrets_key_configured', description: 'set PADDOCK_SECRETS_KEY (32 bytes, base64) on the control plane' }],
      });
    }
    return this.cipher;
  }
}

/** The whole value, or one string field of a JSON-object value (undefined when it has none). */
function pickField(value: string, field: string | undefined): string | undefined {
  if (!field) return value;
  try {
    const parsed: unknown = JSON.parse(value);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      const f = (parsed as Record<string, unknown>)[field];
      return typeof f === 'string' ? f : undefined;
    }
  } catch {
    // not JSON: no fields
  }
  return undefined;
}

/** `{username, password}` from a JSON-object value (or its `field`, itself an object), both non-empty. */
function registryLogin(value: string, field: string | undefined): { username: string; password: string } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return undefined;
  }
  const obj = field ? (parsed as Record<string, unknown> | null)?.[field] : parsed;
  if (!obj || typeof obj !== 'object') return undefined;
  const { username, password } = obj as Record<string, unknown>;
  return typeof username === 'string' && username && typeof password === 'string' && password ? { username, password } : undefined;
}

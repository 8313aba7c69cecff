import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { ResolveSecretsReplySchema, subjects, type ListSecretStoresResponse, type ResolveSecretsReply, type ResolveSecretsRequest, type SecretStore } from '@paddock/contracts';
import { SecretCipher } from '../../src/modules/secret-stores/application/secret-cipher';
import { api, startTestApp, type TestApp } from '../support/app';
import { fieldViolations, type ErrorBody } from '../support/errors';

const KEY = randomBytes(32).toString('base64');
/** Distinct, searchable values: none of them may show up in any response, log line or table dump. */
const value = (label: string): string => `s3cr3t-${label}-${randomBytes(12).toString('hex')}`;
const DB_PASSWORD = value('db');
const API_TOKEN = value('token');
const API_JSON = JSON.stringify({ user: 'svc', token: API_TOKEN });
const ROTATED = value('rotated');
const REJECTED = value('rejected');
const REGISTRY_PASSWORD = value('registry');
const ALL_VALUES = [DB_PASSWORD, API_JSON, API_TOKEN, ROTATED, REJECTED, REGISTRY_PASSWORD];

const logLines: string[] = [];
let t: TestApp;
const bodies: string[] = [];

beforeAll(async () => {
  t = await startTestApp({ env: { PADDOCK_SECRETS_KEY: KEY, LOG_LEVEL: 'trace' }, logSink: { write: (line) => void logLines.push(line) } });
});
afterAll(async () => {
  await t?.close();
});

/** Every response text is kept, to prove afterwards that no value was ever in one. */
async function call<T>(method: string, path: string, opts: { token?: string; body?: unknown } = {}): ReturnType<typeof api<T>> {
  const r = await api<T>(t, method, path, { token: opts.token ?? t.adminToken, ...(opts.body !== undefined ? { body: opts.body } : {}) });
  bodies.push(r.text);
  return r;
}

async function resolve(req: ResolveSecretsRequest): Promise<ResolveSecretsReply> {
  const m = await t.nats.request(subjects.secretsResolve(), JSON.stringify(req), { timeout: 5000 });
  return ResolveSecretsReplySchema.parse(m.json());
}

async function dumpTable(table: string): Promise<string> {
  const c = new Client({ connectionString: t.databaseUrl });
  await c.connect();
  try {
    return (await c.query<{ row: string }>(`SELECT t::text AS row FROM ${table} t`)).rows.map((r) => r.row).join('\n');
  } finally {
    await c.end();
  }
}

describe('secret stores', () => {
  it('creates a store whose reads list its secrets by path and never carry a value', async () => {
    const created = await call<SecretStore>('POST', '/v1/settings/secretStores', {
      body: { secretStore: { name: 'prod', secrets: [{ path: 'DB_PASSWORD', value: DB_PASSWORD }, { path: 'api/credentials', value: API_JSON }] } },
    });
    expect(created.status).toBe(200);
    const now = t.clock.now().toISOString();
    expect(created.body).toEqual({
      name: 'prod',
      providerType: 'SECRET_STORE_PROVIDER_TYPE_PADDOCK',
      secrets: [
        { path: 'DB_PASSWORD', createTime: now, updateTime: now },
        { path: 'api/credentials', createTime: now, updateTime: now },
      ],
      createTime: now,
      updateTime: now,
    });
    const got = await call<SecretStore>('GET', '/v1/settings/secretStores/prod');
    expect(got.body).toEqual(created.body);
    const list = await call<ListSecretStoresResponse>('GET', '/v1/settings/secretStores');
    expect(list.body.secretStores).toEqual([created.body]);
  });

  it('stores values sealed: the table holds no value, and a sealed value moved to another secret does not open', async () => {
    const dump = await dumpTable('cp_secrets');
    expect(dump).toContain('DB_PASSWORD');
    for (const v of ALL_VALUES) expect(dump).not.toContain(v);
    const cipher = SecretCipher.fromBase64(KEY);
    const sealed = cipher.seal('x', 'store-a', 'p');
    expect(cipher.open(sealed, 'store-a', 'p')).toBe('x');
    expect(() => cipher.open(sealed, 'store-a', 'q')).toThrow();
    expect(() => cipher.open(sealed, 'store-b', 'p')).toThrow();
  });

  it('resolves mappings for the gateway: whole values, one field of a JSON value, envVar defaulting to the path', async () => {
    const reply = await resolve({
      organizationId: t.organizationId,
      containers: [
        {
          index: 0,
          at: 'containers[0]',
          // Empty field and envVar are unset (the protobuf form sends them so).
          secretStores: [{ storeName: 'prod', secrets: [{ path: 'DB_PASSWORD', field: '', envVar: '' }, { path: 'api/credentials', field: 'token', envVar: 'API_TOKEN' }] }],
        },
      ],
    });
    expect(reply).toEqual({ ok: true, containers: [{ index: 0, env: { DB_PASSWORD, API_TOKEN: API_TOKEN } }] });
  });

  it('refuses unknown stores, paths and fields by the spec field, with CWSANDBOX_SECRET_STORE_NOT_PROVISIONED', async () => {
    const reply = await resolve({
      organizationId: t.organizationId,
      containers: [
        {
          index: 0,
          at: 'containers[0]',
          secretStores: [
            { storeName: 'nope', secrets: [{ path: 'X' }] },
            { storeName: 'prod', secrets: [{ path: 'MISSING' }, { path: 'DB_PASSWORD', field: 'user' }, { path: 'api/credentials' }] },
          ],
        },
      ],
    });
    expect(reply.ok).toBe(false);
    if (reply.ok) return;
    expect(reply.error.code).toBe('failed_precondition');
    expect(JSON.stringify(reply.error)).toContain('CWSANDBOX_SECRET_STORE_NOT_PROVISIONED');
    const fields = fieldViolations(reply.error as unknown as ErrorBody).map((v) => v.field);
    expect(fields).toEqual([
      'containers[0].secretStores[0].storeName',
      'containers[0].secretStores[1].secrets[0].path',
      'containers[0].secretStores[1].secrets[1].field',
      // `api/credentials` is no env var name: the mapping must say which one.
      'containers[0].secretStores[1].secrets[2].envVar',
    ]);
    for (const v of ALL_VALUES) expect(JSON.stringify(reply)).not.toContain(v);
  });

  it('resolves image pull credentials into Docker config JSON, and refuses a secret without username and password by field', async () => {
    const login = JSON.stringify({ username: 'robot', password: REGISTRY_PASSWORD });
    expect((await call('PATCH', '/v1/settings/secretStores/prod', { body: { secretStore: { secrets: [{ path: 'registry', value: login }] } } })).status).toBe(200);
    const reply = await resolve({
      organizationId: t.organizationId,
      containers: [],
      pullCredentials: [{ at: 'containers[0]', credentials: { registry: 'ghcr.io', credentials: { storeName: 'prod', path: 'registry' } } }],
    });
    expect(reply.ok).toBe(true);
    if (!reply.ok) return;
    expect(JSON.parse(reply.dockerConfigJson ?? '{}')).toEqual({
      auths: { 'ghcr.io': { username: 'robot', password: REGISTRY_PASSWORD, auth: Buffer.from(`robot:${REGISTRY_PASSWORD}`).toString('base64') } },
    });
    const bad = await resolve({
      organizationId: t.organizationId,
      containers: [],
      pullCredentials: [{ at: 'containers[0]', credentials: { registry: 'ghcr.io', credentials: { storeName: 'prod', path: 'DB_PASSWORD' } } }],
    });
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(fieldViolations(bad.error as unknown as ErrorBody).map((v) => v.field)).toEqual(['containers[0].imagePullCredentials.credentials.path']);
    expect(JSON.stringify(bad)).not.toContain(DB_PASSWORD);
    expect((await call('PATCH', '/v1/settings/secretStores/prod', { body: { secretStore: {}, removeSecrets: ['registry'] } })).status).toBe(200);
  });

  it("another organization sees neither the store nor its values", async () => {
    const other = await t.createOrganization('secrets-other');
    expect((await call('GET', '/v1/settings/secretStores/prod', { token: other.adminToken })).status).toBe(404);
    expect((await call<ListSecretStoresResponse>('GET', '/v1/settings/secretStores', { token: other.adminToken })).body.secretStores).toEqual([]);
    const reply = await resolve({ organizationId: other.id, containers: [{ index: 0, at: 'containers[0]', secretStores: [{ storeName: 'prod', secrets: [{ path: 'DB_PASSWORD' }] }] }] });
    expect(reply.ok).toBe(false);
  });

  it('PATCH writes, replaces and removes secrets by path', async () => {
    t.clock.advance(60_000);
    const r = await call<SecretStore>('PATCH', '/v1/settings/secretStores/prod', {
      body: { secretStore: { secrets: [{ path: 'DB_PASSWORD', value: ROTATED }, { path: 'NEW_ONE', value: 'n' }] }, removeSecrets: ['api/credentials'] },
    });
    expect(r.status).toBe(200);
    expect(r.body.secrets.map((s) => s.path)).toEqual(['DB_PASSWORD', 'NEW_ONE']);
    const db = r.body.secrets.find((s) => s.path === 'DB_PASSWORD');
    expect(db?.updateTime).toBe(t.clock.now().toISOString());
    expect(db?.createTime).not.toBe(db?.updateTime);
    expect(r.body.updateTime).toBe(t.clock.now().toISOString());
    const reply = await resolve({ organizationId: t.organizationId, containers: [{ index: 0, at: 'containers[0]', secretStores: [{ storeName: 'prod', secrets: [{ path: 'DB_PASSWORD' }] }] }] });
    expect(reply).toEqual({ ok: true, containers: [{ index: 0, env: { DB_PASSWORD: ROTATED } }] });
  });

  it('names the field and the rule of every invalid request, without echoing a value', async () => {
    const badName = await call<ErrorBody>('POST', '/v1/settings/secretStores', { body: { secretStore: { name: 'Bad_Name', secrets: [{ path: 'a', value: REJECTED }] } } });
    expect(badName.status).toBe(400);
    expect(fieldViolations(badName.body).map((v) => v.field)).toEqual(['secretStore.name']);
    const dup = await call<ErrorBody>('POST', '/v1/settings/secretStores', {
      body: { secretStore: { name: 'dup', secrets: [{ path: 'a', value: REJECTED }, { path: 'a', value: REJECTED }, { path: '/abs', value: '' }] } },
    });
    expect(fieldViolations(dup.body).map((v) => v.field).sort()).toEqual(['secretStore.secrets[1].path', 'secretStore.secrets[2].path', 'secretStore.secrets[2].value'].sort());
    const unknownKey = await call<ErrorBody>('POST', '/v1/settings/secretStores', { body: { secretStore: { name: 'x', values: { a: REJECTED } } } });
    expect(fieldViolations(unknownKey.body).map((v) => v.field)).toEqual(['secretStore.values']);
    const wandb = await call<ErrorBody>('POST', '/v1/settings/secretStores', { body: { secretStore: { name: 'w', providerType: 'SECRET_STORE_PROVIDER_TYPE_WANDB' } } });
    expect(fieldViolations(wandb.body).map((v) => v.field)).toEqual(['secretStore.providerType']);
    const both = await call<ErrorBody>('PATCH', '/v1/settings/secretStores/prod', { body: { secretStore: { secrets: [{ path: 'a', value: REJECTED }] }, removeSecrets: ['a'] } });
    expect(fieldViolations(both.body).map((v) => v.field)).toEqual(['removeSecrets[0]']);
    const taken = await call<ErrorBody>('POST', '/v1/settings/secretStores', { body: { secretStore: { name: 'prod', secrets: [{ path: 'a', value: REJECTED }] } } });
    expect(taken.status).toBe(409);
    expect(fieldViolations(taken.body).map((v) => v.field)).toEqual(['secretStore.name']);
    expect((await call('PATCH', '/v1/settings/secretStores/absent', { body: { secretStore: {} } })).status).toBe(404);
  });

  it('writes are admin-only; users read', async () => {
    const user = await t.createToken('SANDBOX_USER');
    expect((await call('GET', '/v1/settings/secretStores/prod', { token: user })).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', '/v1/settings/secretStores', { secretStore: { name: 'mine', secrets: [{ path: 'a', value: REJECTED }] } }],
      ['PATCH', '/v1/settings/secretStores/prod', { secretStore: { secrets: [{ path: 'DB_PASSWORD', value: REJECTED }] } }],
      ['DELETE', '/v1/settings/secretStores/prod', undefined],
    ] as const) {
      const r = await call<ErrorBody>(method, path, { token: user, ...(body ? { body } : {}) });
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('permission_denied');
    }
  });

  it('deletes a store with its secrets; allowMissing makes a missing store no error', async () => {
    await call('POST', '/v1/settings/secretStores', { body: { secretStore: { name: 'gone', secrets: [{ path: 'a', value: 'b' }] } } });
    expect((await call('DELETE', '/v1/settings/secretStores/gone')).status).toBe(200);
    expect((await call('GET', '/v1/settings/secretStores/gone')).status).toBe(404);
    expect((await call<ErrorBody>('DELETE', '/v1/settings/secretStores/gone')).status).toBe(404);
    expect((await call('DELETE', '/v1/settings/secretStores/gone?allowMissing=true')).status).toBe(200);
    expect(await dumpTable('cp_secrets')).not.toMatch(/^\(gone/m);
  });

  it('no response and no log line ever carried a value', () => {
    expect(bodies.length).toBeGreaterThan(20);
    // The log did see the work (the resolve path logs what it served, by store and count).
    expect(logLines.some((l) => l.includes('resolved secrets of organization'))).toBe(true);
    for (const v of ALL_VALUES) {
      expect(bodies.filter((b) => b.includes(v))).toEqual([]);
      expect(logLines.filter((l) => l.includes(v))).toEqual([]);
    }
  });
});

describe('secret stores without PADDOCK_SECRETS_KEY', () => {
  let bare: TestApp;
  beforeAll(async () => {
    bare = await startTestApp();
  });
  afterAll(async () => {
    await bare?.close();
  });

  it('refuses to hold values, naming the setting, but keeps stores without values', async () => {
    const r = await api<ErrorBody>(bare, 'POST', '/v1/settings/secretStores', { token: bare.adminToken, body: { secretStore: { name: 'k', secrets: [{ path: 'a', value: 'b' }] } } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('failed_precondition');
    expect(r.body.message).toContain('PADDOCK_SECRETS_KEY');
    expect(fieldViolations(r.body).map((v) => v.field)).toEqual(['secretStore.secrets']);
    expect((await api(bare, 'POST', '/v1/settings/secretStores', { token: bare.adminToken, body: { secretStore: { name: 'empty' } } })).status).toBe(200);
  });
});

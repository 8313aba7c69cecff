import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeValue, encodeValue } from '../../src/cty/msgpack';
import { UNKNOWN, type Value } from '../../src/cty/value';
import { objectType } from '../../src/framework/schema';
import { pluginDirectory } from '../../src/install';
import { createLogger } from '../../src/log';
import { makeServerCertificate } from '../../src/plugin/certificate';
import { MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE, checkHandshakeEnv, handshakeLine } from '../../src/plugin/handshake';
import { ProviderHost } from '../../src/plugin/host';
import type { ProtoAttribute } from '../../src/plugin/messages';
import { coreweaveProvider } from '../../src/provider';
import type { RunnerContext } from '../../src/runner/context';
import { RESOURCE_SCHEMA } from '../../src/runner/schema';
import { PROVIDER_VERSION } from '../../src/version';
import { seedConfig } from './fixtures';

const host = (): ProviderHost<RunnerContext> => new ProviderHost(coreweaveProvider({ log: createLogger(() => undefined), env: {} }), createLogger(() => undefined));
const TYPE = objectType(RESOURCE_SCHEMA.attributes);
const find = (attrs: ProtoAttribute[], name: string): ProtoAttribute | undefined => attrs.find((a) => a.name === name);

describe('go-plugin handshake and AutoMTLS certificate', () => {
  it('refuses to run without the magic cookie, without protocol 6, or without the client certificate', () => {
    const bare = checkHandshakeEnv({});
    expect(bare.ok).toBe(false);
    expect(bare.ok ? '' : bare.message).toContain('not meant to be run directly');
    const cookie = { [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE };
    expect(checkHandshakeEnv({ ...cookie, PLUGIN_PROTOCOL_VERSIONS: '5' })).toMatchObject({ ok: false });
    const noCert = checkHandshakeEnv({ ...cookie, PLUGIN_PROTOCOL_VERSIONS: '5,6' });
    expect(noCert.ok ? '' : noCert.message).toContain('PLUGIN_CLIENT_CERT');
    expect(checkHandshakeEnv({ ...cookie, PLUGIN_PROTOCOL_VERSIONS: '5,6', PLUGIN_CLIENT_CERT: 'PEM' })).toEqual({ ok: true, clientCertPem: 'PEM' });
  });

  it('the server certificate is a self-signed P-256 CA for localhost, valid now, that verifies', () => {
    const now = new Date();
    const c = makeServerCertificate(now);
    const x = new X509Certificate(c.certPem);
    expect(x.ca).toBe(true);
    expect(x.subjectAltName).toBe('DNS:localhost');
    expect(x.checkHost('localhost')).toBe('localhost');
    expect(x.verify(x.publicKey)).toBe(true);
    expect(x.publicKey.asymmetricKeyDetails).toMatchObject({ namedCurve: 'prime256v1' });
    expect(x.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
    expect(new Date(x.validFrom).getTime()).toBeLessThanOrEqual(now.getTime());
    expect(new Date(x.validTo).getTime()).toBeGreaterThan(now.getTime());
    expect(Buffer.from(c.der).equals(x.raw)).toBe(true);
  });

  it('handshake line: core 1, protocol 6, unix socket, grpc, certificate base64 without padding', () => {
    const der = new Uint8Array([1, 2, 3, 4]);
    expect(handshakeLine('/tmp/p/provider.sock', der)).toBe('1|6|unix|/tmp/p/provider.sock|grpc|AQIDBA\n');
  });
});

describe('protocol translation (ProviderHost)', () => {
  it('GetProviderSchema: the resource and data source with their flags; nested attributes, sensitive values', () => {
    const s = host().getProviderSchema();
    expect(Object.keys(s.resource_schemas)).toEqual(['coreweave_sandbox_managed_runner']);
    expect(Object.keys(s.data_source_schemas)).toEqual(['coreweave_sandbox_managed_runner']);
    const r = s.resource_schemas.coreweave_sandbox_managed_runner?.block.attributes ?? [];
    expect(find(r, 'zone')).toMatchObject({ required: true, optional: false, computed: false });
    expect(Buffer.from(find(r, 'zone')?.type ?? []).toString()).toBe('"string"');
    expect(find(r, 'policy')).toMatchObject({ required: true, nested_type: { nesting: 'SINGLE' } });
    expect(find(r, 'spec')).toMatchObject({ optional: true, computed: true });
    expect(find(r, 'deployment_spec')).toMatchObject({ computed: true, sensitive: true });
    const overrides = find(find(r, 'spec')?.nested_type?.attributes ?? [], 'overrides')?.nested_type?.attributes ?? [];
    expect(find(overrides, 'env')).toMatchObject({ optional: true, sensitive: true });
    const policy = find(r, 'policy')?.nested_type?.attributes ?? [];
    expect(find(policy, 'base')).toMatchObject({ sensitive: true });
    const ds = s.data_source_schemas.coreweave_sandbox_managed_runner?.block.attributes ?? [];
    expect(find(ds, 'runner_id')).toMatchObject({ required: true });
    expect(find(ds, 'policy')).toMatchObject({ computed: true, optional: false, required: false });
    expect(find(s.provider.block.attributes, 'token')).toMatchObject({ optional: true, sensitive: true });
  });

  it('PlanResourceChange: msgpack in, msgpack out, replacement paths in protocol form', async () => {
    const h = host();
    const prior = { ...seedConfig({ id: 'prod-runner', runner_group_id: 'default' }), uid: 'u', etag: 'e' } as Value;
    const config = seedConfig({ zone: 'us-east-04b' });
    const res = await h.planResourceChange({ type_name: 'coreweave_sandbox_managed_runner', prior_state: { msgpack: encodeValue(TYPE, prior) }, config: { msgpack: encodeValue(TYPE, config) } });
    expect(res.diagnostics).toEqual([]);
    expect(res.requires_replace).toEqual([{ steps: [{ attribute_name: 'zone' }] }]);
    const planned = decodeValue(TYPE, res.planned_state?.msgpack) as Record<string, Value>;
    expect(planned.zone).toBe('us-east-04b');
    expect(planned.install_status).toBe(UNKNOWN);
  });

  it('ValidateResourceConfig: diagnostics point at the top-level attribute Terraform can find, the detail names the full path', async () => {
    const config = seedConfig();
    (config.spec as Record<string, Value>).release_channel = 'RELEASE_CHANNEL_BETA';
    const res = await host().validateResourceConfig({ type_name: 'coreweave_sandbox_managed_runner', config: { msgpack: encodeValue(TYPE, config) } });
    expect(res.diagnostics).toEqual([
      {
        severity: 'ERROR',
        summary: 'Invalid release channel',
        detail: 'spec.release_channel must be RELEASE_CHANNEL_STABLE or RELEASE_CHANNEL_RAPID; got "RELEASE_CHANNEL_BETA".',
        attribute: { steps: [{ attribute_name: 'spec' }] },
      },
    ]);
  });

  it('a failure inside a handler is an error diagnostic, not a broken plugin', async () => {
    const h = host();
    const res = await h.readResource({ type_name: 'coreweave_sandbox_managed_runner', current_state: { msgpack: encodeValue(TYPE, seedConfig()) } });
    expect(res.diagnostics[0]).toMatchObject({ severity: 'ERROR', summary: 'Provider error' });
    expect(res.diagnostics[0]?.detail).toContain('before Terraform configured it');
    const unknownType = await h.validateResourceConfig({ type_name: 'coreweave_nope', config: {} });
    expect(unknownType.diagnostics[0]?.detail).toContain('no resource type coreweave_nope');
  });

  it('UpgradeResourceState: the stored JSON becomes a complete value of the current schema; a newer schema version is refused', async () => {
    const h = host();
    const json = Buffer.from(JSON.stringify({ runner_id: 'prod-runner', zone: 'us-east-04a', policy: {} }));
    const res = await h.upgradeResourceState({ type_name: 'coreweave_sandbox_managed_runner', version: 0, raw_state: { json } });
    const state = decodeValue(TYPE, res.upgraded_state?.msgpack) as Record<string, Value>;
    expect(state).toMatchObject({ runner_id: 'prod-runner', spec: null, etag: null });
    expect(state.policy).toEqual({ display_name: null, base: null, constraints: null, control_plane_access: null });
    const newer = await h.upgradeResourceState({ type_name: 'coreweave_sandbox_managed_runner', version: 3, raw_state: { json } });
    expect(newer.diagnostics[0]?.detail).toContain('written by a newer provider');
  });

  it('ConfigureProvider without a token: the missing-token diagnostic on token', async () => {
    const res = await host().configureProvider({ terraform_version: '1.11.4', config: { msgpack: encodeValue(['object', { token: 'string', endpoint: 'string', http_timeout: 'string' }], null) } });
    expect(res.diagnostics).toMatchObject([{ summary: 'Missing API token', attribute: { steps: [{ attribute_name: 'token' }] } }]);
  });
});

describe('release and install location', () => {
  it('the provider reports 0.26.x, the version in package.json', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
    expect(PROVIDER_VERSION).toBe(pkg.version);
    expect(PROVIDER_VERSION).toMatch(/^0\.26\.\d+$/);
  });

  it('installs into the implied local mirror of the given home', () => {
    expect(pluginDirectory('/home/u', 'linux', 'x64')).toBe(`/home/u/.terraform.d/plugins/registry.terraform.io/coreweave/coreweave/${PROVIDER_VERSION}/linux_amd64`);
  });
});

import { createHash, randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { NatsConnection } from '@nats-io/transport-node';
import { rmSync } from 'node:fs';
import { createServiceLogger } from '@paddock/kit';
import { buildImage, busyboxLayer, pushImage, startRegistry, waitFor, type BuiltImage, type TestRegistry } from '@paddock/testing';
import { IMAGE, startCluster, type Cluster } from './support/cluster';
import { http, type HttpResult } from './support/infra';

/**
 * A secret from the organization's store reaches an env var inside a real (bubblewrap) sandbox
 * on the local backend, through the gateway, and is seen nowhere else: not in any API response,
 * log line of the control plane, gateway or runner, NATS message, or database row (the control
 * plane's event log included). The same holds for a registry login from the store, which the
 * runner uses to pull the sandbox's image from a private repository of a real registry.
 */
describe('secrets from the store reach the sandbox and nothing else', () => {
  const SECRET = `s3cr3t-${randomBytes(16).toString('hex')}`;
  const REGISTRY_PASSWORD = `pw-${randomBytes(16).toString('hex')}`;
  let registry: TestRegistry;
  let privateImage: BuiltImage;
  const gatewayLines: string[] = [];
  const natsPayloads: string[] = [];
  const responses: string[] = [];
  let c: Cluster;
  let watcher: NatsConnection;

  beforeAll(async () => {
    // A private repository the runner itself has no login for: only the sandbox's does.
    registry = await startRegistry({ kind: 'htpasswd', users: { puller: REGISTRY_PASSWORD } });
    privateImage = await buildImage({ layers: [[...busyboxLayer(), { path: 'marker', content: 'from the private repository' }]], entrypoint: ['/bin/sleep', '300'] });
    await pushImage(privateImage, registry, 'team/app:v1', `puller:${REGISTRY_PASSWORD}`);
    c = await startCluster({
      runnerIds: ['r-medium'],
      controlPlaneEnv: { PADDOCK_SECRETS_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'trace' },
      runnerEnv: { LOG_LEVEL: 'trace', PADDOCK_REGISTRY_INSECURE: registry.host },
      gatewayEnv: { GATEWAY_LOG_LEVEL: 'debug' },
      gatewayLog: createServiceLogger({ service: 'gateway', level: 'trace', sink: { write: (l) => void gatewayLines.push(l) } }),
    });
    // Everything on the bus except the request that carries values by design (gateway → runner
    // create) and its reply path: state events, heartbeats, other RPCs.
    watcher = await c.infra.nats.connectHarness();
    watcher.subscribe('evt.>', { callback: (_e, m) => void natsPayloads.push(m.string()) });
    await watcher.flush();
  }, 300_000);
  afterAll(async () => {
    await watcher?.close();
    await c?.stop();
    await registry?.stop();
    if (privateImage) rmSync(privateImage.layoutDir, { recursive: true, force: true });
  });

  const keep = (r: HttpResult): HttpResult => {
    responses.push(r.text);
    return r;
  };

  it('an env var of the sandbox holds the value; every read of the sandbox shows only the mapping', async () => {
    const store = keep(
      await http(c.infra.cp.url, 'POST', '/v1/settings/secretStores', c.infra.cp.token, {
        secretStore: { name: 'app', secrets: [{ path: 'db-password', value: SECRET }] },
      }),
    );
    expect(store.status).toBe(200);
    const spec = {
      containers: [{ image: IMAGE, command: 'sh', args: ['-c', 'printf %s "$DB_PASSWORD" | sha256sum > /tmp/main-digest; exec sleep 300'], secretStores: [{ storeName: 'app', secrets: [{ path: 'db-password', envVar: 'DB_PASSWORD' }] }] }],
    };
    const created = keep(await http(c.gw.url, 'POST', '/v1/sandboxes', c.token, { spec }));
    expect(created.status).toBe(200);
    const id = (created.json as { sandboxId: string }).sandboxId;
    await waitFor(async () => {
      const sb = keep(await http(c.gw.url, 'GET', `/v1/sandboxes/${id}`, c.token)).json as { status: { state: string; stateReason?: string; stateMessage?: string } };
      if (sb.status.state !== 'STATE_RUNNING') throw new Error(JSON.stringify(sb.status));
      return true;
    }, {
      timeoutMs: 60_000,
      what: 'sandbox RUNNING',
    });
    const got = keep(await http(c.gw.url, 'GET', `/v1/sandboxes/${id}`, c.token));
    expect((got.json as { spec: typeof spec }).spec.containers[0]?.secretStores).toEqual(spec.containers[0]?.secretStores);

    // Compared by digest, so the value itself never travels in the test's own request or output.
    const exec = keep(await http(c.gw.url, 'POST', `/v1/sandboxes/${id}:exec`, c.token, { command: ['sh', '-c', 'printf %s "$DB_PASSWORD" | sha256sum'] }));
    const digest = createHash('sha256').update(SECRET).digest('hex');
    expect(exec.json).toMatchObject({ exitCode: 0, stdout: Buffer.from(`${digest}  -\n`).toString('base64') });
    // The sandbox's main process had it from its start, not only execs.
    const main = keep(await http(c.gw.url, 'POST', `/v1/sandboxes/${id}:exec`, c.token, { command: ['cat', '/tmp/main-digest'] }));
    expect(main.json).toMatchObject({ exitCode: 0, stdout: Buffer.from(`${digest}  -\n`).toString('base64') });
    keep(await http(c.gw.url, 'GET', '/v1/sandboxes', c.token));
    keep(await http(c.gw.url, 'POST', `/v1/sandboxes/${id}:stop`, c.token, {}));
  });

  it('a mapping to a store the organization lacks is refused at create, naming the field', async () => {
    const spec = { containers: [{ image: IMAGE, secretStores: [{ storeName: 'absent', secrets: [{ path: 'x', envVar: 'X' }] }] }] };
    const r = keep(await http(c.gw.url, 'POST', '/v1/sandboxes', c.token, { spec }));
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ code: 'failed_precondition' });
    expect(r.text).toContain('CWSANDBOX_SECRET_STORE_NOT_PROVISIONED');
    expect(r.text).toContain('containers[0].secretStores[0].storeName');
    const malformed = keep(await http(c.gw.url, 'POST', '/v1/sandboxes', c.token, { spec: { containers: [{ image: IMAGE, secretStores: [{ storeName: 'app' }] }] } }));
    expect(malformed.status).toBe(400);
    expect(malformed.text).toContain('containers[0].secretStores[0].secrets');
  });

  it('a registry login from the store pulls the sandbox\'s image from a private repository', async () => {
    const login = JSON.stringify({ username: 'puller', password: REGISTRY_PASSWORD });
    const store = keep(await http(c.infra.cp.url, 'POST', '/v1/settings/secretStores', c.infra.cp.token, { secretStore: { name: 'registry', secrets: [{ path: 'login', value: login }] } }));
    expect(store.status).toBe(200);
    const image = `${registry.host}/team/app:v1`;
    const pullCredentials = { registry: registry.host, credentials: { storeName: 'registry', path: 'login' } };
    const created = keep(await http(c.gw.url, 'POST', '/v1/sandboxes', c.token, { spec: { containers: [{ image, imagePullCredentials: pullCredentials }] } }));
    expect(created.status).toBe(200);
    const id = (created.json as { sandboxId: string }).sandboxId;
    const status = async (sandboxId: string): Promise<{ state: string; stateReason?: string }> =>
      (keep(await http(c.gw.url, 'GET', `/v1/sandboxes/${sandboxId}`, c.token)).json as { status: { state: string; stateReason?: string } }).status;
    await waitFor(async () => {
      const st = await status(id);
      if (st.state !== 'STATE_RUNNING') throw new Error(JSON.stringify(st));
      return true;
    }, { timeoutMs: 60_000, what: 'sandbox on the private image RUNNING' });
    const marker = keep(await http(c.gw.url, 'POST', `/v1/sandboxes/${id}:exec`, c.token, { command: ['cat', '/marker'] }));
    expect(marker.json).toMatchObject({ exitCode: 0, stdout: Buffer.from('from the private repository').toString('base64') });
    keep(await http(c.gw.url, 'POST', `/v1/sandboxes/${id}:stop`, c.token, {}));

    // Without the login the same image is refused by the registry, cached or not.
    const bare = keep(await http(c.gw.url, 'POST', '/v1/sandboxes', c.token, { spec: { containers: [{ image }] } }));
    expect(bare.status).toBe(200);
    const bareId = (bare.json as { sandboxId: string }).sandboxId;
    const failed = await waitFor(async () => {
      const st = await status(bareId);
      return st.state === 'STATE_FAILED' || st.state === 'STATE_RUNNING' ? st : undefined;
    }, { timeoutMs: 60_000, what: 'sandbox without the login to end' });
    expect(failed).toMatchObject({ state: 'STATE_FAILED', stateReason: 'IMAGE_PULL_UNAUTHORIZED' });
  });

  it('the value is in no response, log line, event or database row', async () => {
    const cpLogs = c.infra.cp.logs();
    expect(cpLogs).toContain('resolved secrets of organization');
    const runnerLogs = [...c.runners.values()].map((r) => r.output()).join('\n');
    expect(runnerLogs.length).toBeGreaterThan(0);
    expect(gatewayLines.length).toBeGreaterThan(0);
    expect(natsPayloads.some((p) => p.includes('STATE_RUNNING'))).toBe(true);
    const db = new Client({ connectionString: c.infra.adminUrl });
    await db.connect();
    let dump = '';
    try {
      const tables = await db.query<{ schemaname: string; tablename: string }>(`SELECT schemaname, tablename FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`);
      for (const { schemaname, tablename } of tables.rows) {
        const rows = await db.query<{ row: string }>(`SELECT t::text AS row FROM "${schemaname}"."${tablename}" t`);
        dump += rows.rows.map((r) => r.row).join('\n');
      }
    } finally {
      await db.end();
    }
    expect(dump).toContain('db-password');
    expect({
      responses: responses.filter((r) => r.includes(SECRET)).length,
      controlPlaneLog: cpLogs.includes(SECRET),
      gatewayLog: gatewayLines.filter((l) => l.includes(SECRET)).length,
      runnerLog: runnerLogs.includes(SECRET),
      events: natsPayloads.filter((p) => p.includes(SECRET)).length,
      database: dump.includes(SECRET),
    }).toEqual({ responses: 0, controlPlaneLog: false, gatewayLog: 0, runnerLog: false, events: 0, database: false });
    // The registry login likewise, as its password and as the base64 a Docker config carries.
    const login = [REGISTRY_PASSWORD, Buffer.from(`puller:${REGISTRY_PASSWORD}`).toString('base64')];
    const has = (text: string): boolean => login.some((l) => text.includes(l));
    expect({
      responses: responses.filter(has).length,
      controlPlaneLog: has(cpLogs),
      gatewayLog: gatewayLines.filter(has).length,
      runnerLog: has(runnerLogs),
      events: natsPayloads.filter(has).length,
      database: has(dump),
    }).toEqual({ responses: 0, controlPlaneLog: false, gatewayLog: 0, runnerLog: false, events: 0, database: false });
  });
});

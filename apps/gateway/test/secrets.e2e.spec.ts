import { createHash, randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { NatsConnection } from '@nats-io/transport-node';
import { createServiceLogger } from '@paddock/kit';
import { waitFor } from '@paddock/testing';
import { IMAGE, startCluster, type Cluster } from './support/cluster';
import { http, type HttpResult } from './support/infra';

/**
 * A secret from the organization's store reaches an env var inside a real (bubblewrap) sandbox
 * on the local backend, through the gateway, and is seen nowhere else: not in any API response,
 * log line of the control plane, gateway or runner, NATS message, or database row (the control
 * plane's event log included).
 */
describe('secrets from the store reach the sandbox and nothing else', () => {
  const SECRET = `s3cr3t-${randomBytes(16).toString('hex')}`;
  const gatewayLines: string[] = [];
  const natsPayloads: string[] = [];
  const responses: string[] = [];
  let c: Cluster;
  let watcher: NatsConnection;

  beforeAll(async () => {
    c = await startCluster({
      runnerIds: ['r-medium'],
      controlPlaneEnv: { PADDOCK_SECRETS_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'trace' },
      runnerEnv: { LOG_LEVEL: 'trace' },
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
  });
});

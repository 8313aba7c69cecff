import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { RunnerCredentialsReplySchema, subjects, type IssuedNatsCredentials, type RunnerCredentialsReply } from '@paddock/contracts';
import { connectNats, credsInfo, writeSecretFile } from '@paddock/nats';
import { waitFor } from '@paddock/testing';
import { api, startTestApp, type TestApp } from '../support/app';
import type { ErrorBody } from '../support/errors';
import { createRunner } from '../support/fixtures';

/**
 * The control plane issues controller users (to admins, over HTTP) and runner users (to the
 * controller of the runner's cluster, over NATS). Every connection below is to a real
 * nats-server with authentication on: refusals marked "server" come from its permissions.
 */
let t: TestApp;
let dir: string;
const open: NatsConnection[] = [];

async function connectWith(creds: IssuedNatsCredentials): Promise<NatsConnection> {
  const file = join(dir, `${creds.role}-${creds.userName}-${open.length}.creds`);
  writeSecretFile(file, creds.creds);
  const nc = await connectNats({ servers: t.natsUrl, credsFile: file, reconnect: false });
  open.push(nc);
  return nc;
}

async function controllerCreds(cluster: string, token = t.adminToken): Promise<IssuedNatsCredentials> {
  const r = await api<IssuedNatsCredentials>(t, 'POST', `/v1/clusters/${cluster}/natsCredentials`, { token });
  if (r.status !== 200) throw new Error(`controller credentials: ${r.status} ${r.text}`);
  return r.body;
}

async function askRunnerCreds(nc: NatsConnection, clusterId: string, runnerId: string): Promise<RunnerCredentialsReply> {
  const m = await nc.request(subjects.runnerCredentialsRequest(clusterId), JSON.stringify({ runnerId }), { timeout: 5_000 });
  return RunnerCredentialsReplySchema.parse(m.json());
}

function errorsOf(nc: NatsConnection): string[] {
  const seen: string[] = [];
  void (async () => {
    for await (const s of nc.status()) if (s.type === 'error') seen.push(s.error.message);
  })();
  return seen;
}

beforeAll(async () => {
  t = await startTestApp({ env: { PADDOCK_NATS_RUNNER_CREDS_TTL_S: '600' } });
  dir = mkdtempSync(join(tmpdir(), 'cp-nats-creds-'));
});
afterAll(async () => {
  await Promise.all(open.map((nc) => nc.close().catch(() => undefined)));
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('NATS credentials', () => {
  it('an admin obtains its cluster controller’s credentials: scoped to that cluster by the server', async () => {
    const { clusterId } = await createRunner(t, 'nc-a');
    const creds = await controllerCreds(clusterId);
    expect(creds).toMatchObject({ role: 'controller', userName: clusterId });
    expect(credsInfo(creds.creds)).toMatchObject({ name: clusterId, role: 'controller' });
    const nc = await connectWith(creds);
    const errors = errorsOf(nc);
    nc.publish(subjects.installReport(clusterId), '{}');
    nc.publish(subjects.installReport('00000000-0000-4000-8000-000000000000'), '{}');
    await nc.flush();
    await waitFor(() => errors.length === 1, { timeoutMs: 5_000, what: 'the other cluster’s install report refused' });
    expect(errors).toEqual(['Permissions Violation for Publish to "evt.controller.v1.00000000-0000-4000-8000-000000000000.install"']);
  });

  it('a controller obtains the credentials of a runner of its cluster, and they are that runner’s only', async () => {
    const { clusterId } = await createRunner(t, 'nc-b');
    const ctl = await connectWith(await controllerCreds(clusterId));
    const reply = await askRunnerCreds(ctl, clusterId, 'nc-b');
    if (!reply.ok) throw new Error(reply.error.message);
    expect(reply.credentials).toMatchObject({ role: 'runner', userName: 'nc-b' });
    const ttl = new Date(reply.credentials.expiresAt ?? 0).getTime() - Date.now();
    expect(ttl).toBeGreaterThan(590_000);
    expect(ttl).toBeLessThanOrEqual(601_000);
    const runner = await connectWith(reply.credentials);
    const errors = errorsOf(runner);
    runner.publish(subjects.runnerHeartbeat('nc-b'), '{}');
    runner.publish(subjects.runnerHeartbeat('nc-a'), '{}');
    await runner.flush();
    await waitFor(() => errors.length === 1, { timeoutMs: 5_000, what: 'the other runner’s heartbeat refused' });
    expect(errors[0]).toBe('Permissions Violation for Publish to "evt.runner.v1.nc-a.heartbeat"');
  });

  it('a controller cannot obtain the credentials of a runner of another cluster', async () => {
    const mine = await createRunner(t, 'nc-mine');
    const theirs = await createRunner(t, 'nc-theirs');
    const ctl = await connectWith(await controllerCreds(mine.clusterId));
    // On its own subject: the control plane refuses a runner that is not of this cluster.
    const reply = await askRunnerCreds(ctl, mine.clusterId, 'nc-theirs');
    expect(reply).toEqual({
      ok: false,
      error: {
        code: 'permission_denied',
        message: `runner "nc-theirs" is not a runner of cluster ${mine.clusterId}: a controller obtains credentials only for the runners of its own cluster`,
        details: [],
      },
    });
    // On the other cluster's subject: the server refuses the request itself.
    const errors = errorsOf(ctl);
    await expect(askRunnerCreds(ctl, theirs.clusterId, 'nc-theirs')).rejects.toThrow();
    await waitFor(() => errors.length === 1, { timeoutMs: 5_000, what: 'publish refused by the server' });
    expect(errors[0]).toBe(`Permissions Violation for Publish to "${subjects.runnerCredentialsRequest(theirs.clusterId)}"`);
  });

  it('only admins of the cluster’s organization obtain controller credentials', async () => {
    const { clusterId } = await createRunner(t, 'nc-org');
    const user = await t.createToken('SANDBOX_USER');
    expect((await api<ErrorBody>(t, 'POST', `/v1/clusters/${clusterId}/natsCredentials`, { token: user })).status).toBe(403);
    const other = await t.createOrganization('other-org');
    const foreign = await api<ErrorBody>(t, 'POST', `/v1/clusters/${clusterId}/natsCredentials`, { token: other.adminToken });
    expect(foreign.status).toBe(404);
    expect((await api(t, 'POST', `/v1/clusters/${clusterId}/natsCredentials`)).status).toBe(401);
  });
});

describe('NATS credentials on a control plane given no signing keys', () => {
  let bare: TestApp;
  beforeAll(async () => {
    bare = await startTestApp({ env: { PADDOCK_NATS_RUNNER_SIGNING_KEY: '', PADDOCK_NATS_CONTROLLER_SIGNING_KEY: '' } });
  });
  afterAll(async () => {
    await bare?.close();
  });

  it('refuses to issue, naming the setting it lacks', async () => {
    const cluster = await bare.registerCluster(bare.adminToken, { name: 'no-keys', zone: 'z1' });
    const r = await api<ErrorBody>(bare, 'POST', `/v1/clusters/${cluster.id}/natsCredentials`, { token: bare.adminToken });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe('this control plane issues no NATS credentials for controllers: start it with PADDOCK_NATS_CONTROLLER_SIGNING_KEY (the account\'s controller signing key) and NATS_CREDS');
  });
});

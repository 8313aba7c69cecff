import { IMAGE, startCluster, type Cluster } from './support/cluster';
import { waitFor } from '@paddock/testing';
import { startGateway } from './support/infra';

interface ErrorBody {
  code: string;
  message: string;
  details?: { reason?: string; fieldViolations?: { field: string; description: string }[] }[];
}
interface View {
  sandboxId: string;
  status: { state: string; runnerId: string };
}

const INSIDE = '203.0.113.9';
const OUTSIDE = '198.51.100.7';
const LOCKED = { controlPlaneAccess: { sourceIpAllowlist: { cidrs: ['203.0.113.0/24'] } } };

/** A request as it arrives through a proxy that reports the client's address. */
async function from(source: string | null, base: string, method: string, path: string, token: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (source !== null) headers['x-forwarded-for'] = source;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as unknown) : null };
}

const reasonOf = (b: unknown): string | undefined => (b as ErrorBody).details?.find((d) => d.reason)?.reason;
const spec = (runnerIds?: string[]) => ({ spec: { containers: [{ image: IMAGE }], ...(runnerIds ? { runnerIds, mode: 'SANDBOX_MODE_CKS' } : {}) } });

/** controlPlaneAccess.sourceIpAllowlist: at runner selection and before every operation on a sandbox. */
describe('gateway: runner policy source-address allowlist', () => {
  let c: Cluster;

  beforeAll(async () => {
    c = await startCluster({
      runnerIds: ['r-open', 'r-locked'],
      policies: { 'r-open': {}, 'r-locked': LOCKED },
      gatewayEnv: { GATEWAY_TRUST_PROXY: 'loopback' },
    });
  }, 300_000);

  afterAll(async () => {
    await c?.stop();
  });

  it('keeps a caller outside the allowlist off that runner at selection, naming the rule, and places it elsewhere', async () => {
    const explained = await from(OUTSIDE, c.gw.url, 'POST', '/v1/sandboxes:explain', c.token, spec());
    expect(explained.status).toBe(200);
    const verdicts = (explained.json as { verdicts: { runnerId: string; admitted: boolean; violations: { field: string; rule: string }[] }[] }).verdicts;
    expect(verdicts.find((v) => v.runnerId === 'r-locked')).toMatchObject({
      admitted: false,
      violations: [{ field: 'controlPlaneAccess.sourceIpAllowlist', rule: 'source_ip_not_allowed' }],
    });
    expect(verdicts.find((v) => v.runnerId === 'r-open')?.admitted).toBe(true);

    const refused = await from(OUTSIDE, c.gw.url, 'POST', '/v1/sandboxes', c.token, spec(['r-locked']));
    expect(refused.status).toBe(400);
    expect(reasonOf(refused.json)).toBe('CWSANDBOX_NO_SUITABLE_RUNNER');
    const violations = (refused.json as ErrorBody).details?.flatMap((d) => d.fieldViolations ?? []) ?? [];
    // The address is the only reason: the same spec is admitted from inside (below).
    expect(violations).toEqual([
      expect.objectContaining({
        field: 'controlPlaneAccess.sourceIpAllowlist',
        description: `runner r-locked: source address ${OUTSIDE} is not in the runner policy's controlPlaneAccess.sourceIpAllowlist (1 prefix)`,
      }),
    ]);

    const elsewhere = await from(OUTSIDE, c.gw.url, 'POST', '/v1/sandboxes', c.token, spec());
    expect(elsewhere.status).toBe(200);
    const id = (elsewhere.json as View).sandboxId;
    const waited = await from(OUTSIDE, c.gw.url, 'GET', `/v1/sandboxes/${id}:wait?timeoutSeconds=30`, c.token);
    expect((waited.json as View).status.runnerId).toBe('r-open');
  });

  it('refuses every operation on a sandbox of that runner from outside, and allows it from inside and from private addresses', async () => {
    const created = await from(INSIDE, c.gw.url, 'POST', '/v1/sandboxes', c.token, spec(['r-locked']));
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const id = (created.json as View).sandboxId;
    expect(((await from(INSIDE, c.gw.url, 'GET', `/v1/sandboxes/${id}:wait?timeoutSeconds=30`, c.token)).json as View).status.state).toBe('STATE_RUNNING');
    const exec = { command: ['echo', 'hi'] };
    expect((await from(INSIDE, c.gw.url, 'POST', `/v1/sandboxes/${id}:exec`, c.token, exec)).json).toMatchObject({ exitCode: 0, stdout: Buffer.from('hi\n').toString('base64') });

    const outside = [
      ['GET', `/v1/sandboxes/${id}`, undefined],
      ['GET', `/v1/sandboxes/${id}:wait?timeoutSeconds=0`, undefined],
      ['POST', `/v1/sandboxes/${id}:exec`, exec],
      ['GET', `/v1/sandboxes/${id}:readFile?path=/etc/hostname`, undefined],
      ['GET', `/v1/sandboxes/${id}/logs`, undefined],
      ['DELETE', `/v1/sandboxes/${id}`, undefined],
    ] as const;
    for (const [method, path, body] of outside) {
      const r = await from(OUTSIDE, c.gw.url, method, path, c.token, body);
      expect(r.status, `${method} ${path}`).toBe(403);
      expect((r.json as ErrorBody).code).toBe('permission_denied');
      expect(reasonOf(r.json)).toBe('PADDOCK_SOURCE_IP_NOT_ALLOWED');
      expect((r.json as ErrorBody).message).toBe(
        `source address ${OUTSIDE} is not in the runner policy's controlPlaneAccess.sourceIpAllowlist (1 prefix); its sandboxes cannot be used from this address`,
      );
    }
    // The refused delete changed nothing; a private source (the socket peer here) is not restricted.
    const still = await from(null, c.gw.url, 'GET', `/v1/sandboxes/${id}`, c.token);
    expect(still.status).toBe(200);
    expect((still.json as View).status.state).toBe('STATE_RUNNING');
    expect((await from(null, c.gw.url, 'POST', `/v1/sandboxes/${id}:exec`, c.token, exec)).json).toMatchObject({ exitCode: 0 });
    expect((await from(INSIDE, c.gw.url, 'DELETE', `/v1/sandboxes/${id}`, c.token)).status).toBe(200);
  });

  it('ignores X-Forwarded-For from a peer it does not trust (no spoofing into the allowlist, or out of it)', async () => {
    const gw2 = await startGateway(c.infra);
    try {
      await waitFor(() => gw2.registry.isFresh('r-locked') || undefined, { timeoutMs: 30_000, what: 'gw2 hears r-locked' });
      // gw2 trusts no proxy: the client is the loopback peer, whatever the header claims.
      const created = await from(OUTSIDE, gw2.url, 'POST', '/v1/sandboxes:explain', c.token, spec(['r-locked']));
      expect(created.status).toBe(200);
      const v = (created.json as { verdicts: { runnerId: string; admitted: boolean }[] }).verdicts;
      expect(v).toEqual([expect.objectContaining({ runnerId: 'r-locked', admitted: true })]);
    } finally {
      await gw2.close();
    }
  });
});

import { CONTROL_PLANE_ENTRY, DB_ACCESS_ENTRY, buildPackages, freePort, httpJson, startControlPlaneProcess, type AppProcess, type ThrowawayNats } from '@paddock/testing';

/**
 * The real control plane (compiled, as a process: apps never import apps) beside the gateway
 * under test. It migrates the database it shares with the gateway, so the gateway reads the
 * control plane's real published views; fixtures (organizations, tokens, runners and their
 * policies) go through its public API, as an admin's would.
 */
export interface ControlPlane {
  readonly url: string;
  /** Admin token of the operator organization. */
  readonly token: string;
  readonly organizationId: string;
  /** A new organization and its first admin token. */
  createOrganization(name: string): Promise<{ id: string; adminToken: string }>;
  /** A new token of the organization whose admin token is `adminToken` (default: the operator's). */
  issueToken(role?: 'SANDBOX_ADMIN' | 'SANDBOX_USER', adminToken?: string): Promise<{ token: string; id: string }>;
  revokeToken(id: string, adminToken?: string): Promise<void>;
  /**
   * Declares the runner `runnerId` with `policy` in the operator organization (on a cluster of its
   * own: one runner per cluster), unless it exists; returns its policy etag, the one a runner
   * started with that policy must report for placement to trust the policy.
   */
  declareRunner(runnerId: string, policy: unknown): Promise<string>;
  /** Its log lines so far (stdout). */
  logs(): string;
  stop(): Promise<void>;
  /** Starts it again on the same port, database and token (after `stop`). */
  restart(): Promise<void>;
}

export async function startControlPlane(databaseUrl: string, nats: ThrowawayNats, extraEnv: Record<string, string> = {}): Promise<ControlPlane> {
  buildPackages(['@paddock/control-plane'], [CONTROL_PLANE_ENTRY, DB_ACCESS_ENTRY]);
  const port = await freePort();
  const env = { PADDOCK_MAINTENANCE_INTERVAL_MS: '0', PADDOCK_TOKEN_CACHE_TTL_MS: '0', ...extraEnv };
  let app: AppProcess & { token: string } = await startControlPlaneProcess({ databaseUrl, nats, port, env });
  const token = app.token;
  const call = async <T>(method: string, path: string, body?: unknown, as = token): Promise<T> => {
    const r = await httpJson<T>(app.url, method, path, as, body);
    if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.json)}`);
    return r.json;
  };
  const organizationId = (await call<{ organization: { id: string } }>('GET', '/v1/auth/whoami')).organization.id;
  return {
    get url() {
      return app.url;
    },
    token,
    organizationId,
    async createOrganization(name) {
      const r = await call<{ id: string; adminToken: { token: string } }>('POST', '/v1/organizations', { name });
      return { id: r.id, adminToken: r.adminToken.token };
    },
    async issueToken(role = 'SANDBOX_USER', adminToken = token) {
      const r = await call<{ id: string; token: string }>('POST', '/v1/tokens', { name: `test ${role.toLowerCase()}`, role }, adminToken);
      return { token: r.token, id: r.id };
    },
    async revokeToken(id, adminToken = token) {
      await call('DELETE', `/v1/tokens/${id}`, undefined, adminToken);
    },
    async declareRunner(runnerId, policy) {
      const existing = await httpJson<{ etag: string }>(app.url, 'GET', `/v1/sandbox/managedRunners/${runnerId}`, token);
      if (existing.status === 200) return existing.json.etag;
      const cluster = await call<{ id: string }>('POST', '/v1/clusters', { name: `cluster-${runnerId}`, zone: 'local-1' });
      const created = await call<{ etag: string }>('POST', '/v1/sandbox/managedRunners', { identity: { runnerId, zone: 'local-1', clusterId: cluster.id }, policy });
      return created.etag;
    },
    logs: () => app.stdout(),
    stop: () => app.stop(),
    async restart() {
      app = await startControlPlaneProcess({ databaseUrl, nats, port, token, env });
    },
  };
}

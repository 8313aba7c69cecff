import { PermanentError } from './retry';

/** The few control-plane calls a controller makes over HTTP, with its organization's admin token. */
export class ControlPlaneClient {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
  ) {}

  private async call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> {
    const r = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, json: (text ? JSON.parse(text) : undefined) as T };
  }

  /** Registers (idempotently, by name) the cluster this controller runs in. */
  async registerCluster(name: string, zone: string): Promise<{ id: string; organizationId?: string }> {
    const r = await this.call<{ id: string; organizationId?: string; message?: string }>('POST', '/v1/clusters', { name, zone });
    const msg = `registering cluster ${name}: ${r.status} ${JSON.stringify(r.json)}`;
    // 5xx (still starting, migrating) is worth retrying; a 4xx (bad token, bad name) is not.
    if (r.status >= 500) throw new Error(msg);
    if (r.status >= 300) throw new PermanentError(msg);
    return r.json;
  }

  async whoami(): Promise<{ organizationId: string }> {
    const r = await this.call<{ organizationId: string }>('GET', '/v1/auth/whoami');
    if (r.status >= 300) throw new Error(`whoami: ${r.status} ${JSON.stringify(r.json)}`);
    return r.json;
  }

  /**
   * Declares a runner on this cluster through the public API (the path an admin takes) unless one
   * already exists: `pnpm start`'s default runner. `policy` is the one it is created with
   * (omitted = none: the platform default); an existing runner's policy is left as its admin set it.
   */
  async ensureRunner(runnerId: string, clusterId: string, zone: string, policy?: Record<string, unknown>): Promise<'created' | 'exists'> {
    const got = await this.call('GET', `/v1/sandbox/managedRunners/${encodeURIComponent(runnerId)}`);
    if (got.status === 200) return 'exists';
    const r = await this.call<{ code?: string }>('POST', `/v1/sandbox/managedRunners?requestId=${encodeURIComponent(`default-runner-${clusterId}`)}`, {
      displayName: 'Local runner (this machine)',
      identity: { runnerId, zone, clusterId },
      spec: { releaseChannel: 'RELEASE_CHANNEL_STABLE' },
      ...(policy ? { policy } : {}),
    });
    if (r.status >= 300 && r.json.code !== 'already_exists') throw new Error(`declaring runner ${runnerId}: ${r.status} ${JSON.stringify(r.json)}`);
    return 'created';
  }
}

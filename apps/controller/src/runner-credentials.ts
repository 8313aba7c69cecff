import type { NatsConnection } from '@nats-io/transport-node';
import { PaddockError, RunnerCredentialsReplySchema, subjects } from '@paddock/contracts';
import { credsInfo, renewalDue } from '@paddock/nats';

/** Where a driver gets the NATS credentials (`.creds` content) of a runner it deploys. */
export interface RunnerCredentialSource {
  /**
   * Credentials for `runnerId`: `current` is kept while it is still good for more than half its
   * lifetime, otherwise new ones are issued (rotation before expiry).
   */
  credsFor(runnerId: string, current?: string): Promise<string>;
}

/**
 * Asks the control plane, on this cluster's own subject (the only one the controller's NATS user
 * may publish requests on), so it gets credentials only for the runners of its own cluster.
 * Issued credentials are kept in memory and re-used until half of their lifetime is gone.
 */
export class ControlPlaneRunnerCredentials implements RunnerCredentialSource {
  private readonly issued = new Map<string, string>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly clusterId: string,
    private readonly now: () => Date = () => new Date(),
    private readonly timeoutMs = 10_000,
  ) {}

  private stillGood(runnerId: string, creds: string | undefined): creds is string {
    if (!creds) return false;
    try {
      const info = credsInfo(creds);
      return info.name === runnerId && !renewalDue(info, this.now());
    } catch {
      return false;
    }
  }

  async credsFor(runnerId: string, current?: string): Promise<string> {
    const cached = this.issued.get(runnerId);
    if (this.stillGood(runnerId, cached)) return cached;
    if (this.stillGood(runnerId, current)) {
      this.issued.set(runnerId, current);
      return current;
    }
    const m = await this.nc.request(subjects.runnerCredentialsRequest(this.clusterId), JSON.stringify({ runnerId }), { timeout: this.timeoutMs });
    const reply = RunnerCredentialsReplySchema.parse(m.json());
    if (!reply.ok) throw PaddockError.fromBody(reply.error);
    this.issued.set(runnerId, reply.credentials.creds);
    return reply.credentials.creds;
  }
}

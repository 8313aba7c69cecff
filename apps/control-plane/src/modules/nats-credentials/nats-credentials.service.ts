import { Inject, Injectable } from '@nestjs/common';
import { PaddockError, type IssuedNatsCredentials, type NatsRole } from '@paddock/contracts';
import { credsInfo, NatsUserIssuer, readCredsFile, readSigningKeyFile } from '@paddock/nats';
import type { Kysely } from 'kysely';
import { AppConfig } from '../../config/app-config';
import type { CpDatabase } from '../../db/database';
import { KYSELY } from '../../infrastructure/tokens';
import { ClustersService } from '../clusters/clusters.service';

/**
 * The issuer of this control plane: the account its own user belongs to, and the runner and
 * controller signing keys it was given. Undefined when it was given none (NATS without auth).
 */
export function issuerFromConfig(config: AppConfig): NatsUserIssuer | undefined {
  const seeds: Partial<Record<NatsRole, string>> = {
    ...(config.natsRunnerSigningKeyFile ? { runner: readSigningKeyFile(config.natsRunnerSigningKeyFile) } : {}),
    ...(config.natsControllerSigningKeyFile ? { controller: readSigningKeyFile(config.natsControllerSigningKeyFile) } : {}),
  };
  if (!Object.keys(seeds).length) return undefined;
  if (!config.natsCredsFile) {
    throw new Error('PADDOCK_NATS_RUNNER_SIGNING_KEY / PADDOCK_NATS_CONTROLLER_SIGNING_KEY need NATS_CREDS: users are issued into the account of the control plane’s own user');
  }
  const own = credsInfo(new TextDecoder().decode(readCredsFile(config.natsCredsFile)), `NATS_CREDS ${config.natsCredsFile}`);
  return new NatsUserIssuer(own.account, seeds);
}

/** Injection token of the control plane's `NatsUserIssuer | undefined`. */
export const NATS_ISSUER = Symbol('NATS_ISSUER');

/**
 * Issues NATS users: runners (to the controller of the runner's cluster) and controllers (to
 * admins of the cluster's organization). JWT lifetimes run on the wall clock, as nats-server
 * checks them, never on the injected Clock.
 */
@Injectable()
export class NatsCredentialsService {
  constructor(
    @Inject(NATS_ISSUER) private readonly issuer: NatsUserIssuer | undefined,
    @Inject(KYSELY) private readonly db: Kysely<CpDatabase>,
    private readonly config: AppConfig,
    private readonly clusters: ClustersService,
  ) {}

  private issuerFor(role: NatsRole, variable: string): NatsUserIssuer {
    if (!this.issuer?.canIssue(role)) {
      throw new PaddockError('failed_precondition', `this control plane issues no NATS credentials for ${role}s: start it with ${variable} (the account's ${role} signing key) and NATS_CREDS`);
    }
    return this.issuer;
  }

  /** A runner's credentials, for the controller of `clusterId` (the subject it asked on). */
  async forRunner(clusterId: string, runnerId: string): Promise<IssuedNatsCredentials> {
    const issuer = this.issuerFor('runner', 'PADDOCK_NATS_RUNNER_SIGNING_KEY');
    const row = await this.db
      .selectFrom('cp_runners')
      .select('runner_id')
      .where('cluster_id', '=', clusterId)
      .where('runner_id', '=', runnerId)
      .executeTakeFirst();
    if (!row) {
      throw new PaddockError('permission_denied', `runner "${runnerId}" is not a runner of cluster ${clusterId}: a controller obtains credentials only for the runners of its own cluster`);
    }
    const issued = await issuer.issue('runner', runnerId, { ttlSeconds: this.config.runnerCredsTtlS });
    return { role: 'runner', userName: runnerId, creds: issued.creds, expiresAt: issued.expiresAt?.toISOString() ?? null };
  }

  /** A controller's credentials for a cluster of the caller's organization (by id or name). */
  async forController(organizationId: string, clusterRef: string): Promise<IssuedNatsCredentials> {
    const issuer = this.issuerFor('controller', 'PADDOCK_NATS_CONTROLLER_SIGNING_KEY');
    const cluster = await this.clusters.get(organizationId, clusterRef);
    const issued = await issuer.issue('controller', cluster.id, { ttlSeconds: this.config.controllerCredsTtlS });
    return { role: 'controller', userName: cluster.id, creds: issued.creds, expiresAt: issued.expiresAt?.toISOString() ?? null };
  }
}

import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Msg, NatsConnection } from '@nats-io/transport-node';
import { PaddockError, ResolveSecretsRequestSchema, subjects, type ResolveSecretsReply } from '@paddock/contracts';
import { NatsResponder } from '../../../infrastructure/nats-responder';
import { NATS } from '../../../infrastructure/tokens';
import { SecretStoresService } from '../application/secret-stores.service';

/**
 * Answers `rpc.cp.v1.secrets.resolve`: only gateways may publish there (their NATS permissions),
 * and a gateway asks for the organization it has authenticated the caller of. Logs say which
 * store paths were served, never a value.
 */
@Injectable()
export class SecretsResolveResponder implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger('SecretsResolve');
  private readonly responder: NatsResponder<ResolveSecretsReply>;

  constructor(
    @Inject(NATS) nats: NatsConnection,
    private readonly stores: SecretStoresService,
  ) {
    this.responder = new NatsResponder(nats, this.log, 'resolving secrets', (m) => this.answer(m));
  }

  onApplicationBootstrap(): void {
    this.responder.listen(subjects.secretsResolve());
  }

  async onModuleDestroy(): Promise<void> {
    await this.responder.close();
  }

  private async answer(m: Msg): Promise<Extract<ResolveSecretsReply, { ok: true }>> {
    const req = ResolveSecretsRequestSchema.safeParse(m.json());
    if (!req.success) throw new PaddockError('invalid_argument', 'body must be a ResolveSecretsRequest');
    const resolved = await this.stores.resolve(req.data);
    const served = req.data.containers.flatMap((c) => c.secretStores.map((s) => `${s.storeName}(${s.secrets.length})`));
    const pulls = (req.data.pullCredentials ?? []).map((p) => `${p.credentials.registry} from ${p.credentials.credentials.storeName}`);
    this.log.log(`resolved secrets of organization ${req.data.organizationId}: ${[...served, ...pulls].join(', ')}`);
    return { ok: true, ...resolved };
  }
}

import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { isPaddockError, PaddockError, queueGroups, ResolveSecretsRequestSchema, subjects, type ResolveSecretsReply } from '@paddock/contracts';
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
  private sub: Subscription | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    @Inject(NATS) private readonly nats: NatsConnection,
    private readonly stores: SecretStoresService,
  ) {}

  onApplicationBootstrap(): void {
    this.sub = this.nats.subscribe(subjects.secretsResolve(), {
      queue: queueGroups.controlPlane,
      callback: (_e, m) => {
        const p = this.answer(m).finally(() => this.inFlight.delete(p));
        this.inFlight.add(p);
      },
    });
  }

  async onModuleDestroy(): Promise<void> {
    this.sub?.unsubscribe();
    await Promise.all(this.inFlight);
  }

  private async answer(m: Msg): Promise<void> {
    let reply: ResolveSecretsReply;
    try {
      const req = ResolveSecretsRequestSchema.safeParse(m.json());
      if (!req.success) throw new PaddockError('invalid_argument', 'body must be a ResolveSecretsRequest');
      reply = { ok: true, ...(await this.stores.resolve(req.data)) };
      const served = req.data.containers.flatMap((c) => c.secretStores.map((s) => `${s.storeName}(${s.secrets.length})`));
      const pulls = (req.data.pullCredentials ?? []).map((p) => `${p.credentials.registry} from ${p.credentials.credentials.storeName}`);
      this.log.log(`resolved secrets of organization ${req.data.organizationId}: ${[...served, ...pulls].join(', ')}`);
    } catch (e) {
      const err = isPaddockError(e) ? e : new PaddockError('internal', `resolving secrets failed: ${e instanceof Error ? e.message : String(e)}`);
      if (!isPaddockError(e)) this.log.error(err.message);
      reply = { ok: false, error: err.toBody() };
    }
    if (m.reply) m.respond(JSON.stringify(reply));
  }
}

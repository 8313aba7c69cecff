import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { isPaddockError, PaddockError, queueGroups, RunnerCredentialsRequestSchema, subjects, type RunnerCredentialsReply } from '@paddock/contracts';
import { NATS } from '../../infrastructure/tokens';
import { NatsCredentialsService } from './nats-credentials.service';

/**
 * Answers `rpc.cp.v1.cluster.<clusterId>.runnerCredentials`. Only the controller of that cluster
 * may publish on that subject (nats-server enforces its permissions), so the subject is the
 * proof of who is asking: a controller of another cluster cannot ask here, and asking on its own
 * subject for a runner of another cluster is refused below.
 */
@Injectable()
export class RunnerCredentialsResponder implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger('RunnerCredentials');
  private sub: Subscription | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    @Inject(NATS) private readonly nats: NatsConnection,
    private readonly credentials: NatsCredentialsService,
  ) {}

  onApplicationBootstrap(): void {
    this.sub = this.nats.subscribe(subjects.allRunnerCredentialsRequests(), {
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
    let reply: RunnerCredentialsReply;
    try {
      const clusterId = m.subject.split('.')[4] ?? '';
      if (subjects.runnerCredentialsRequest(clusterId) !== m.subject) throw new PaddockError('invalid_argument', `not a runner credentials subject: ${m.subject}`);
      const req = RunnerCredentialsRequestSchema.safeParse(m.json());
      if (!req.success) throw new PaddockError('invalid_argument', 'body must be {"runnerId": "<runner id>"}');
      reply = { ok: true, credentials: await this.credentials.forRunner(clusterId, req.data.runnerId) };
      this.log.log(`issued NATS credentials of runner ${req.data.runnerId} to the controller of cluster ${clusterId}`);
    } catch (e) {
      const err = isPaddockError(e) ? e : new PaddockError('internal', `issuing runner credentials failed: ${e instanceof Error ? e.message : String(e)}`);
      if (!isPaddockError(e)) this.log.error(err.message);
      reply = { ok: false, error: err.toBody() };
    }
    if (m.reply) m.respond(JSON.stringify(reply));
  }
}

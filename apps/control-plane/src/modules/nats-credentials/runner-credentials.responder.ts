import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Msg, NatsConnection } from '@nats-io/transport-node';
import { PaddockError, RunnerCredentialsRequestSchema, subjects, type RunnerCredentialsReply } from '@paddock/contracts';
import { NatsResponder } from '../../infrastructure/nats-responder';
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
  private readonly responder: NatsResponder<RunnerCredentialsReply>;

  constructor(
    @Inject(NATS) nats: NatsConnection,
    private readonly credentials: NatsCredentialsService,
  ) {
    this.responder = new NatsResponder(nats, this.log, 'issuing runner credentials', (m) => this.answer(m));
  }

  onApplicationBootstrap(): void {
    this.responder.listen(subjects.allRunnerCredentialsRequests());
  }

  async onModuleDestroy(): Promise<void> {
    await this.responder.close();
  }

  private async answer(m: Msg): Promise<Extract<RunnerCredentialsReply, { ok: true }>> {
    const clusterId = m.subject.split('.')[4] ?? '';
    if (subjects.runnerCredentialsRequest(clusterId) !== m.subject) throw new PaddockError('invalid_argument', `not a runner credentials subject: ${m.subject}`);
    const req = RunnerCredentialsRequestSchema.safeParse(m.json());
    if (!req.success) throw new PaddockError('invalid_argument', 'body must be {"runnerId": "<runner id>"}');
    const credentials = await this.credentials.forRunner(clusterId, req.data.runnerId);
    this.log.log(`issued NATS credentials of runner ${req.data.runnerId} to the controller of cluster ${clusterId}`);
    return { ok: true, credentials };
  }
}

import type { Logger } from '@nestjs/common';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { isPaddockError, PaddockError, queueGroups, type ApiErrorBody } from '@paddock/contracts';

/**
 * One request subject the control plane answers over NATS: a queue subscription shared by the
 * control-plane replicas, every outcome answered as `{ ok: true, ... }` or `{ ok: false, error }`,
 * and in-flight answers awaited on shutdown so a stopping process never drops a request it took.
 * Unexpected failures are logged as errors; a PaddockError is the caller's, answered as is.
 */
export class NatsResponder<Reply extends { ok: boolean }> {
  private sub: Subscription | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly nats: NatsConnection,
    private readonly log: Logger,
    /** What the request does, for the message of an unexpected failure ("issuing runner credentials"). */
    private readonly doing: string,
    private readonly answer: (m: Msg) => Promise<Extract<Reply, { ok: true }>>,
  ) {}

  listen(subject: string): void {
    this.sub = this.nats.subscribe(subject, {
      queue: queueGroups.controlPlane,
      callback: (_e, m) => {
        const p = this.respond(m).finally(() => this.inFlight.delete(p));
        this.inFlight.add(p);
      },
    });
  }

  async close(): Promise<void> {
    this.sub?.unsubscribe();
    await Promise.all(this.inFlight);
  }

  private async respond(m: Msg): Promise<void> {
    let reply: Extract<Reply, { ok: true }> | { ok: false; error: ApiErrorBody };
    try {
      reply = await this.answer(m);
    } catch (e) {
      const err = isPaddockError(e) ? e : new PaddockError('internal', `${this.doing} failed: ${e instanceof Error ? e.message : String(e)}`);
      if (!isPaddockError(e)) this.log.error(err.message);
      reply = { ok: false, error: err.toBody() };
    }
    if (m.reply) m.respond(JSON.stringify(reply));
  }
}

import { Controller, Get, Header, Inject } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { NatsConnection } from '@nats-io/transport-node';
import { PaddockError } from '@paddock/contracts';
import { sql, type Kysely } from 'kysely';
import type { CpDatabase } from '../../db/database';
import { KYSELY, NATS } from '../../infrastructure/tokens';
import { Public } from '../identity/auth.decorators';
import { Metrics } from './metrics';
import { OpenApiDocument } from './openapi-document';

const CHECK_TIMEOUT_MS = 2_000;

function withTimeout<T>(p: Promise<T>, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${what} did not answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
    p.then(
      (v) => { clearTimeout(t); resolve(v); },
      (e: unknown) => { clearTimeout(t); reject(e instanceof Error ? e : new Error(String(e))); },
    );
  });
}

@ApiExcludeController()
@Public()
@Controller()
export class HealthController {
  constructor(
    @Inject(KYSELY) private readonly db: Kysely<CpDatabase>,
    @Inject(NATS) private readonly nats: NatsConnection,
    private readonly metrics: Metrics,
    private readonly openapi: OpenApiDocument,
  ) {}

  /** Liveness: the process serves HTTP. Deliberately checks nothing else. */
  @Get('healthz')
  healthz(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Readiness: Postgres and NATS answer a round trip. */
  @Get('readyz')
  async readyz(): Promise<{ status: 'ok'; checks: Record<string, string> }> {
    const checks: Record<string, string> = {};
    const failures: string[] = [];
    await Promise.all([
      withTimeout(sql`SELECT 1`.execute(this.db), 'database').then(
        () => { checks.database = 'ok'; },
        (e: unknown) => { checks.database = 'unavailable'; failures.push(`database: ${(e as Error).message}`); },
      ),
      (this.nats.isClosed() ? Promise.reject(new Error('connection closed')) : withTimeout(this.nats.flush(), 'nats')).then(
        () => { checks.nats = 'ok'; },
        (e: unknown) => { checks.nats = 'unavailable'; failures.push(`nats: ${(e as Error).message}`); },
      ),
    ]);
    if (failures.length) {
      throw new PaddockError('unavailable', `not ready: ${failures.join('; ')}`, { metadata: checks });
    }
    return { status: 'ok', checks };
  }

  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  async prometheus(): Promise<string> {
    return this.metrics.registry.metrics();
  }

  @Get('openapi.json')
  openapiJson(): object {
    return this.openapi.get();
  }
}

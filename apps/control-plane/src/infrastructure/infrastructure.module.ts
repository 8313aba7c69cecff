import { Global, Inject, Injectable, Logger, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats } from '@paddock/nats';
import { createPostgresDb, EventStore } from '@paddock/event-store';
import type { Kysely } from 'kysely';
import { AppConfig } from '../config/app-config';
import type { CpDatabase } from '../db/database';
import { Clock, IdGenerator, KYSELY, NATS, RandomIdGenerator, SystemClock } from './tokens';

/**
 * Closes the process's connections last, after every module's onModuleDestroy (intake
 * unsubscribes, schedulers stop): drain NATS, then close the pool.
 */
@Injectable()
class ConnectionsCloser implements OnApplicationShutdown {
  private readonly log = new Logger('Shutdown');
  constructor(
    @Inject(KYSELY) private readonly db: Kysely<CpDatabase>,
    @Inject(NATS) private readonly nats: NatsConnection,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    if (!this.nats.isClosed()) {
      await this.nats.drain().catch((e: unknown) => this.log.warn(`NATS drain failed: ${String(e)}`));
    }
    await this.db.destroy().catch((e: unknown) => this.log.warn(`closing the database pool failed: ${String(e)}`));
  }
}

export interface InfrastructureOptions {
  config: AppConfig;
  clock?: Clock;
  ids?: IdGenerator;
}

@Global()
@Module({})
export class InfrastructureModule {
  static forRoot(opts: InfrastructureOptions): DynamicModule {
    return {
      module: InfrastructureModule,
      providers: [
        { provide: AppConfig, useValue: opts.config },
        { provide: Clock, useValue: opts.clock ?? new SystemClock() },
        { provide: IdGenerator, useValue: opts.ids ?? new RandomIdGenerator() },
        {
          provide: KYSELY,
          useFactory: (): Kysely<CpDatabase> =>
            createPostgresDb<CpDatabase>(opts.config.databaseUrl, {
              max: opts.config.dbPoolMax,
              applicationName: 'paddock-control-plane',
            }),
        },
        {
          provide: NATS,
          useFactory: (): Promise<NatsConnection> =>
            connectNats({ servers: opts.config.natsUrl, credsFile: opts.config.natsCredsFile, name: 'paddock-control-plane', maxReconnectAttempts: -1 }),
        },
        {
          provide: EventStore,
          useFactory: (db: Kysely<CpDatabase>): EventStore<CpDatabase> => new EventStore<CpDatabase>(db),
          inject: [KYSELY],
        },
        ConnectionsCloser,
      ],
      exports: [AppConfig, Clock, IdGenerator, KYSELY, NATS, EventStore],
    };
  }
}
